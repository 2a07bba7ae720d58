"""The audit's stage helpers: prepared items read once per id, targets of an enabled audit."""

import json

from oncoeval.exposure.stages import read_items
from oncoeval.workflow import exposure as exposure_wf


def test_items_are_read_once_per_id_and_blank_ones_skipped(tmp_path):
    path = tmp_path / "notes.jsonl"
    rows = [
        {"patient_id": "p1", "note": "First note text here."},
        {"patient_id": "p1", "note": "First note text here.", "note_set": "unlabelled"},
        {"patient_id": 2, "note": "  "},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert read_items(path, "patient_id", "note") == [
        {"item_id": "p1", "text": "First note text here."}
    ]


def test_a_notes_sections_are_items_of_their_own(tmp_path):
    path = tmp_path / "notes.jsonl"
    row = {"doc_id": "d1", "sections": {"hpi": {"text": "History text."}, "plan": {"text": ""}}}
    path.write_text(json.dumps(row) + "\n")
    assert read_items(path, "doc_id", "sections.*.text") == [
        {"item_id": "d1:hpi", "text": "History text."}
    ]


def test_every_study_with_items_to_probe_is_auditable_and_targets_follow_enabled():
    assert set(exposure_wf.auditable_studies()) == {
        "cancer_myth",
        "side_effects",
        "guidelines",
        "coral",
    }
    config = {"evaluate": ["a", "b"], "studies": {"guidelines": {"enabled": True}}}
    assert exposure_wf.targets(config, "guidelines") == []
    config["studies"]["guidelines"]["exposure"] = {"enabled": True}
    assert exposure_wf.targets(config, "guidelines") == [
        "results/guidelines/exposure/a.tsv",
        "results/guidelines/exposure/b.tsv",
        "results/guidelines/tables/exposure.tsv",
        "results/guidelines/tables/exposure.md",
        "results/guidelines/figures/exposure.png",
    ]
