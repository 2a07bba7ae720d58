"""The reporting checklist names each item by its guideline's published number.

The numbers below are the guidelines' own item lists (oncoeval.export.checklist.SOURCES says
where each was checked): TRIPOD-LLM's Table 2, the twelve CHART items by the subitems its
statement lists, and the six items of MI-CLEAR-LLM (2024). They are facts about the published
checklists, written down here so that a renumbered or invented item fails.
"""

from __future__ import annotations

from conftest import link_workflow

from oncoeval.export import checklist, run
from oncoeval.report.provenance import provenance

# TRIPOD-LLM (Nat Med 2025), Table 2: 19 main items, lettered where they have subitems.
TRIPOD_LLM = (
    ["1", "2", "3a", "3b", "4"]
    + [f"5{x}" for x in "abcde"]
    + [f"6{x}" for x in "abcde"]
    + [f"7{x}" for x in "abcde"]
    + [f"8{x}" for x in "abc"]
    + ["9a", "9b", "10", "11", "12", "13"]
    + [f"14{x}" for x in "abcdef"]
    + ["15"]
    + [f"16{x}" for x in "abcd"]
    + ["17", "18"]
    + [f"19{x}" for x in "abcdefg"]
)
# CHART (2025): 12 items; the statement's abstract lists their subitems as below.
CHART_SUBITEMS = {
    "1": "ab", "2": "ab", "3": "ab", "4": "abc", "5": "ab", "6": "abcd", "7": "ab", "8": "",
    "9": "a", "10": "abc", "11": "abc", "12": "abcde",
}  # fmt: skip
CHART = [n for n in CHART_SUBITEMS] + [n + s for n, subs in CHART_SUBITEMS.items() for s in subs]
# MI-CLEAR-LLM (2024): six items.
MI_CLEAR_LLM = ["1", "2", "3", "4", "5", "6"]
PUBLISHED = {"TRIPOD-LLM": TRIPOD_LLM, "CHART": CHART, "MI-CLEAR-LLM": MI_CLEAR_LLM}


def _items(tmp_path):
    workdir = link_workflow(tmp_path)
    config = run.load_config(workdir, ["config/paper/cancer_myth.yaml"])
    prov = provenance(config, {m["id"]: m for m in config["models"]}, workdir)
    facts = checklist.RunFacts(workdir, config, prov)
    return checklist.entries(facts), facts


def test_every_item_number_is_in_its_published_list(tmp_path):
    items, _ = _items(tmp_path)
    assert len(TRIPOD_LLM) == 49  # Table 2's numbered rows
    assert len(MI_CLEAR_LLM) == 6
    unpublished = [(e.guideline, e.item) for e in items if e.item not in PUBLISHED[e.guideline]]
    assert unpublished == []
    keys = [(e.guideline, e.item) for e in items]
    assert len(keys) == len(set(keys))
    assert set(checklist.SOURCES) == set(checklist.GUIDELINES) == set(PUBLISHED)


def test_each_fact_sits_under_the_item_that_asks_for_it(tmp_path):
    """What each published item asks for, and the run's answer found under it."""
    items, facts = _items(tmp_path)
    by_id = {f"{e.guideline} {e.item}": e for e in items}
    # TRIPOD-LLM 6a: LLM name, version, last date of training.
    assert all(m in by_id["TRIPOD-LLM 6a"].answer for ms in facts.evaluated().values() for m in ms)
    assert "last date of training" in by_id["TRIPOD-LLM 6a"].answer
    # TRIPOD-LLM 6c: how text was generated, prompt engineering, inference settings.
    assert "Decoding per model" in by_id["TRIPOD-LLM 6c"].answer
    assert "template files" in by_id["TRIPOD-LLM 6c"].answer
    # TRIPOD-LLM 7c: the date of inference; MI-CLEAR-LLM 1 and CHART 6: the query dates.
    for key in ("TRIPOD-LLM 7c", "MI-CLEAR-LLM 1", "CHART 6"):
        assert "no responses in results/ yet" in by_id[key].answer, key
    # TRIPOD-LLM 7e and CHART 9a: comparisons and the data analysis.
    assert "Bonferroni-adjusted" in by_id["TRIPOD-LLM 7e"].answer
    assert "intervals over whole clusters" in by_id["CHART 9a"].answer
    # TRIPOD-LLM 9a: prompt design, curation and selection (for the authors beyond the files).
    assert by_id["TRIPOD-LLM 9a"].status == checklist.PARTLY
    # TRIPOD-LLM 14e/14f and CHART 12e: data and code availability.
    assert "RO-Crate" in by_id["TRIPOD-LLM 14f"].answer
    assert "contains_phi" in by_id["TRIPOD-LLM 14e"].answer
    assert by_id["TRIPOD-LLM 14e"].answer == by_id["CHART 12e"].answer
    # MI-CLEAR-LLM 2 stochasticity, 3 prompt wording, 4 prompt structuring, 5 prompt testing.
    assert "Seeds" in by_id["MI-CLEAR-LLM 2"].answer
    assert by_id["MI-CLEAR-LLM 3"].status == checklist.FILLED
    assert "fresh conversation" in by_id["MI-CLEAR-LLM 4"].answer
    assert by_id["MI-CLEAR-LLM 5"].status == checklist.AUTHORS
