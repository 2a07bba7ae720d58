"""The study block: schema defaults filled in, and what each per-model rule depends on."""

import pytest

from oncoeval import config as oc
from oncoeval.studies.side_effects import workflow as sew


def filled(block: dict) -> dict:
    """A config whose study block is filled as rules/common.smk fills it."""
    return {
        "studies": {
            "side_effects": oc.filled_study_block(
                {"studies": {"side_effects": block}}, "side_effects"
            )
        }
    }


def test_empty_block_gets_every_schema_default():
    block = sew.settings(filled({"enabled": True}))
    assert block["matcher"] == {
        "method": "embedding",
        "model": "embedded:all-minilm-l6-v2",
        "threshold": 0.5,
        "synonyms": "resources/side_effects/synonyms.tsv",
        "judge_max_new_tokens": 400,
    }
    assert block["regimes"] == ["ff", "ff_lsc", "grounded", "grounded_lsc"]
    assert (block["list_size"], block["max_new_tokens"]) == ([20, 30], 1000)


def test_match_params_hold_only_what_the_matches_depend_on():
    config = filled({"matcher": {"method": "lexical", "threshold": 0.9}})
    assert sew.matcher_params(config) == {"method": "lexical"}
    assert "synonyms" in sew.match_inputs(config, "m")


def test_llm_matcher_needs_a_judge():
    config = filled({"matcher": {"method": "llm"}})
    assert "judges.matcher names no judge" in sew.config_problem(config)
    with pytest.raises(ValueError, match="judges.matcher"):
        sew.match_inputs(config, "m")
    config["studies"]["side_effects"]["judges"] = {"matcher": "j"}
    assert (
        sew.match_inputs(config, "m")["judged"] == "results/side_effects/responses/j/match--m.jsonl"
    )
    assert sew.validation_methods(config) == ["lexical", "embedding", "llm"]
