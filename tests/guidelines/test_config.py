"""The study block of the default and paper configs match the study schema; defaults fill in."""

from pathlib import Path

import jsonschema
import yaml

from oncoeval.config.checks import filled_study_block
from oncoeval.studies.guidelines import workflow as guidelines_wf

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "config" / "schemas" / "guidelines.schema.yaml"


def test_default_and_paper_blocks_are_valid():
    schema = yaml.safe_load(SCHEMA.read_text())
    for name in ("config/config.yaml", "config/paper/guidelines.yaml"):
        block = yaml.safe_load((REPO / name).read_text())["studies"]["guidelines"]
        jsonschema.validate(block, schema)


def test_schema_defaults_fill_missing_keys():
    block = filled_study_block({"studies": {"guidelines": {"rollouts": {"k": 3}}}}, "guidelines")
    assert block["rollouts"] == {
        "k": 3,
        "temperature": 1.0,
        "top_p": None,
        "max_new_tokens": 1000,
        "seed": 0,
    }
    assert block["consistency"]["delta"] == 0.9 and block["meta_classifier"]["C"] == 0.1
    assert block["unlabelled_notes"] is None  # data keys have no demo default


def test_the_paper_config_predicts_with_the_study_prompt_and_the_whole_tree_as_json():
    import json

    from oncoeval.studies.guidelines.prompts import read_template, rollout_requests
    from oncoeval.studies.guidelines.tree import load_tree

    block = filled_study_block(
        yaml.safe_load((REPO / "config/paper/guidelines.yaml").read_text()), "guidelines"
    )
    template = read_template(REPO / guidelines_wf.template(block, "predict"))
    tree = load_tree(REPO / "resources/demo/guidelines/guideline.json")
    note = {"patient_id": "p1", "note": "A note.", "note_set": "labelled"}
    prompt = rollout_requests([note], tree, template, 1, 1.0, 10, 0)[0].messages[0]["content"]
    # the tree in full, as JSON that loads back to the canonical tree
    start = prompt.index("{", prompt.index("Guideline"))
    tree_json, _ = json.JSONDecoder().raw_decode(prompt[start:])
    assert tree_json == tree.to_dict()
    # the study's instructions: only final_path joined by "->", or NOT_GUIDELINE_COMPLIANT with a
    # reason; no skipped nodes; no assumed final treatment; stop at a recommendation or where
    # the information runs out
    for phrase in (
        '{"final_path": "<node id> -> <node id>',
        '{"final_path": "NOT_GUIDELINE_COMPLIANT", "reason"',
        "do not leave out any node",
        "Do not assume that the final treatment has already been started",
        "a node that carries a recommendation",
        "the furthest node the information in the note allows",
    ):
        assert phrase in prompt
    # the demo keeps its short prompt for the embedded model
    demo = filled_study_block(
        yaml.safe_load((REPO / "config/config.yaml").read_text()), "guidelines"
    )
    assert guidelines_wf.template(demo, "predict") == "config/prompts/guidelines/predict_path.txt"


def test_provenance_hashes_the_prediction_template_the_run_reads_and_not_the_other():
    from oncoeval.report import provenance

    prompts = "config/prompts/guidelines"
    for chosen, other in (
        ("predict_path_paper", "predict_path"),
        ("predict_path", "predict_path_paper"),
    ):
        block = filled_study_block(
            {"studies": {"guidelines": {"enabled": True, "predict_prompt": chosen}}}, "guidelines"
        )
        hashed = provenance.input_files({"studies": {"guidelines": block}}, REPO)
        assert f"{prompts}/{chosen}.txt" in hashed and f"{prompts}/{other}.txt" not in hashed
        # every synthetic step's template too
        assert f"{prompts}/choose_path.txt" in hashed and f"{prompts}/synth_record.txt" in hashed
