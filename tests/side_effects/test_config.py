"""The study block: schema defaults filled in, and what each per-model rule depends on."""

from oncoeval.config import checks as oc
from oncoeval.studies import contract
from oncoeval.studies.side_effects import workflow as side_effects_wf


def filled(block: dict) -> dict:
    """The study block filled as rules/common.smk fills it."""
    return oc.filled_study_block({"studies": {"side_effects": block}}, "side_effects")


def test_empty_block_gets_every_schema_default():
    block = filled({"enabled": True})
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
    assert side_effects_wf.matcher_params(config) == {"method": "lexical"}
    assert "synonyms" in side_effects_wf.match_inputs(config, "m")


def test_llm_matcher_needs_a_judge():
    config = filled({"matcher": {"method": "llm"}})
    assert contract.required_roles("side_effects", config) == [
        ("judges.matcher", "matcher.method is llm")
    ]
    assert contract.required_roles("side_effects", filled({})) == []
    config["judges"] = {"matcher": "j"}
    assert (
        side_effects_wf.match_inputs(config, "m")["judged"]
        == "results/side_effects/responses/j/match--m.jsonl"
    )
    assert side_effects_wf.validation_methods(config) == ["lexical", "embedding", "llm"]
