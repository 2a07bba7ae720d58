"""The configuration reference (config/README.md) is written from the schemas, so no default is
written twice by hand, and the schema YAML is clean: no key given twice, no stray keyword, every
key described (issue #25 items 1 and 5)."""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest
import yaml
from yamllint import linter
from yamllint.config import YamlLintConfig

from oncoeval import backends
from oncoeval.config import reference as docs_config
from oncoeval.config.checks import config_schema, study_schema
from oncoeval.studies import STUDIES
from tests.conftest import REPO

SCHEMA_FILES = [
    REPO / "config" / "config.schema.yaml",
    *sorted((REPO / "config/schemas").glob("*.yaml")),
]
# What a property's schema may hold: JSON Schema 2020-12 keywords used here and x- annotations.
KEYWORDS = {
    "$ref", "$schema", "description", "type", "default", "enum", "const", "items", "properties",
    "additionalProperties", "unevaluatedProperties", "required", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems", "uniqueItems", "pattern",
    "anyOf", "oneOf", "allOf", "if", "then", "else", "$defs", "minLength", "propertyNames",
}  # fmt: skip


def test_the_committed_reference_is_the_generated_one():
    committed = docs_config.REFERENCE.read_text(encoding="utf-8")
    assert committed == docs_config.reference(), "config/README.md is stale: run `make docs`"
    done = subprocess.run(
        [sys.executable, "-m", "oncoeval.config.reference", "--check"],
        cwd=REPO, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_the_reference_follows_the_schemas(monkeypatch):
    """A default or description changed in a study schema, a backend's part or the top-level
    schema changes the reference, and a stale file is reported."""
    text = docs_config.reference()
    assert "| `rollouts.k` | integer (≥ 1) | `10` |" in text
    assert "| `concurrency` | integer (≥ 1) | `8` | Requests in flight at once. |" in text
    assert "| `claim_stale_s` | number (≥ 1) | `120` |" in text

    def edited_study(study):
        schema = copy.deepcopy(study_schema(study))
        if study == "guidelines":
            schema["properties"]["rollouts"]["properties"]["k"]["default"] = 7
        return schema

    def edited_config():
        schema = config_schema()
        schema["properties"]["claim_stale_s"]["default"] = 99
        for part in schema["$defs"]["model"]["allOf"]:  # one key of every backend
            key = next(iter(part["then"].get("properties") or {}), None)
            if key:
                name = part["if"]["properties"]["backend"]["const"]
                part["then"]["properties"][key]["description"] = f"Edited {name} key."
        schema["$defs"]["resources"]["properties"]["gpu"]["description"] = "Edited GPUs."
        return schema

    monkeypatch.setattr(docs_config, "study_schema", edited_study)
    monkeypatch.setattr(docs_config, "config_schema", edited_config)
    changed = docs_config.reference()
    assert "| `rollouts.k` | integer (≥ 1) | `7` |" in changed
    assert "| `claim_stale_s` | number (≥ 1) | `99` |" in changed
    for name in backends.BACKEND_MODULES:
        assert f"Edited {name} key." in changed, name
    assert "| `gpu` | integer (≥ 0) | `0` | Edited GPUs. |" in changed
    assert docs_config.main(["--check"]) == 1


def test_every_study_backend_and_top_level_key_is_in_the_reference():
    text = docs_config.reference()
    for study in STUDIES:
        assert f"\n### {study}\n" in text
        for key in study_schema(study)["properties"]:
            assert f"| `{key}` |" in text, f"studies.{study}.{key} missing"
    schema = config_schema()
    for key in schema["properties"]:
        assert f"`{key}`" in text, key
    for part in schema["$defs"]["model"]["allOf"]:
        name = part["if"]["properties"]["backend"]["const"]
        assert f"\n### `backend: {name}`\n" in text
        for key in part["then"]["properties"]:
            assert f"| `{key}` |" in text, f"{name}.{key} missing"


@pytest.mark.parametrize("path", SCHEMA_FILES, ids=lambda p: p.name)
def test_schema_yaml_lints_clean_with_duplicate_keys_refused(path):
    config = YamlLintConfig(file=str(REPO / ".yamllint.yaml"))
    assert config.rules["key-duplicates"] not in (False, "disable")
    problems = list(linter.run(path.read_text(encoding="utf-8"), config, str(path)))
    assert not problems, "\n".join(f"{path.name}:{p.line}: {p.message}" for p in problems)


def test_the_linter_refuses_a_key_given_twice():
    config = YamlLintConfig(file=str(REPO / ".yamllint.yaml"))
    text = "a:\n  default: 0\n  default: 1\n"
    problems = list(linter.run(text, config))
    assert [p.rule for p in problems] == ["key-duplicates"]


def _property_schemas(schema, where):
    for key, sub in (schema.get("properties") or {}).items():
        yield f"{where}.{key}", sub
        yield from _property_schemas(sub, f"{where}.{key}")
    for name in ("then", "items"):
        if isinstance(schema.get(name), dict):
            yield from _property_schemas(schema[name], where)
    for sub in schema.get("allOf") or []:
        yield from _property_schemas(sub, where)


@pytest.mark.parametrize("path", SCHEMA_FILES, ids=lambda p: p.name)
def test_every_schema_key_is_described_and_holds_only_keywords(path):
    """A description with an unquoted comma in a flow mapping becomes a stray key; every key is
    described, and one without a default is required or named so in its description."""
    schema = yaml.safe_load(path.read_text(encoding="utf-8"))
    problems = []
    parts = list(_property_schemas(schema, path.name))
    parts += [(f"{path.name}#{k}", d) for k, d in (schema.get("$defs") or {}).items()]
    for where, sub in parts:
        stray = set(sub) - KEYWORDS - {k for k in sub if k.startswith("x-")}
        if stray:
            problems.append(f"{where}: not schema keywords {sorted(stray)}")
        if "description" not in sub and "$ref" not in sub:
            problems.append(f"{where}: no description")
    assert not problems, "\n".join(problems)


def test_the_schema_names_only_functions_that_exist():
    import importlib
    import re

    text = (REPO / "config" / "config.schema.yaml").read_text(encoding="utf-8")
    named = re.findall(r"\boncoeval(?:\.\w+)+", text)
    assert named
    for dotted in named:
        module, _, attr = dotted.rpartition(".")
        try:
            found = hasattr(importlib.import_module(module), attr)
        except ModuleNotFoundError:
            found = importlib.util.find_spec(dotted) is not None
        assert found, f"config.schema.yaml names {dotted}, which does not exist"
