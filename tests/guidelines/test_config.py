"""The study block of the default and paper configs match the study schema; defaults fill in."""

from pathlib import Path

import jsonschema
import yaml

from oncoeval.studies.guidelines.rules_support import settings

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "config" / "schemas" / "guidelines.schema.yaml"


def test_default_and_paper_blocks_are_valid():
    schema = yaml.safe_load(SCHEMA.read_text())
    for name in ("config/config.yaml", "config/paper/guidelines.yaml"):
        block = yaml.safe_load((REPO / name).read_text())["studies"]["guidelines"]
        jsonschema.validate(block, schema)


def test_schema_defaults_fill_missing_keys():
    block = settings({"studies": {"guidelines": {"rollouts": {"k": 3}}}}, SCHEMA)
    assert block["rollouts"] == {
        "k": 3,
        "temperature": 1.0,
        "top_p": None,
        "max_new_tokens": 1000,
        "seed": 0,
    }
    assert block["consistency"]["delta"] == 0.9 and block["meta_classifier"]["C"] == 0.1
    assert block["unlabelled_notes"] is None  # data keys have no demo default
