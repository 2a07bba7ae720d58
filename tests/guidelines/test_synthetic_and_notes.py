"""Synthetic supervision pieces and the notes loader."""

import json

import pandas as pd
import pytest

from oncoeval.errors import InputError
from oncoeval.records import Response
from oncoeval.studies.guidelines.aggregate import annotator_table
from oncoeval.studies.guidelines.notes import load_labelled, load_unlabelled
from oncoeval.studies.guidelines.parse import check_path
from oncoeval.studies.guidelines.synthetic import benchmark_rows, parse_choice, sample_targets
from oncoeval.studies.guidelines.tree import NOT_COMPLIANT, load_tree

from .conftest import DEMO


@pytest.fixture(scope="module")
def tree():
    return load_tree(DEMO / "guideline.json")


def test_sampled_targets_are_valid_distinct_and_seeded(tree):
    targets = sample_targets(tree, 6, seed=3)
    paths = [tuple(t["target_path"].split(" -> ")) for t in targets]
    assert all(check_path(tree, p) is None for p in paths)
    assert len(set(paths)) == 6
    assert targets == sample_targets(tree, 6, seed=3)


def test_parse_choice():
    assert parse_choice('{"choice": "A"}') == "A"
    assert parse_choice('```json\n{"choice": "B"}\n```') == "B"
    assert parse_choice("Path B fits better.") == "B"
    assert parse_choice("A or B, hard to say") is None
    assert parse_choice(None) is None


def test_pair_kept_when_regenerated_or_chosen_in_both_orders():
    t = "L-1-1 -> L-1-2"
    notes = [
        {
            "item_id": f"s{i}|unstructured",
            "synth_id": f"s{i}",
            "variant": "unstructured",
            "target_path": t,
            "status": "ok",
            "note": "x",
        }
        for i in range(4)
    ] + [
        {
            "item_id": "s9|structured",
            "synth_id": "s9",
            "variant": "structured",
            "target_path": t,
            "status": "empty_note",
            "note": "",
        }
    ]
    other = ("L-1-1", "L-1-3")
    preds = {
        "s0|unstructured": ("L-1-1", "L-1-2"),
        "s1|unstructured": other,
        "s2|unstructured": other,
        "s3|unstructured": None,
    }

    def r(rid, text):
        return Response(rid, "judge", text)

    choices = {
        "s1|unstructured|target_first": r("", '{"choice": "A"}'),
        "s1|unstructured|target_second": r("", '{"choice": "B"}'),  # target wins twice
        "s2|unstructured|target_first": r("", '{"choice": "A"}'),
        "s2|unstructured|target_second": r("", '{"choice": "A"}'),  # position bias: dropped
        "s3|unstructured|target_first": r("", "unsure"),
        "s3|unstructured|target_second": r("", '{"choice": "B"}'),
    }
    rows = {x["item_id"]: x for x in benchmark_rows(notes, preds, choices)}
    assert rows["s0|unstructured"]["decision"] == "regenerated" and rows["s0|unstructured"]["kept"]
    assert (
        rows["s1|unstructured"]["decision"] == "chosen_both_orders"
        and rows["s1|unstructured"]["kept"]
    )
    assert (
        rows["s2|unstructured"]["decision"] == "target_not_chosen"
        and not rows["s2|unstructured"]["kept"]
    )
    assert rows["s3|unstructured"]["decision"] == "chooser_unparseable"
    assert rows["s9|structured"]["decision"] == "empty_note"


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_unusable_labels_are_listed_and_non_compliant_is_a_label(tree, tmp_path):
    path = write(
        tmp_path / "notes.jsonl",
        [
            {"patient_id": "a", "note": "n", "label": "LUNG-1-1 -> LUNG-1-3"},
            {"patient_id": "b", "note": "n", "label": ""},
            {"patient_id": "c", "note": "n", "label": "LUNG-1-1 -> LUNG-4-1"},
            {"patient_id": "d", "note": "n", "label": "LUNG-1-1 -> LUNG-1-3", "compliant": False},
            {"patient_id": "e", "note": "n", "label": "not_guideline_compliant"},
            # compliant: false with no path traced is the non-compliant label, not "no label"
            {"patient_id": "f", "note": "n", "label": "", "compliant": False},
            {"patient_id": "g", "note": "n", "label": "LUNG-1-2 -> LUNG-1-3"},
        ],
    )
    usable, unusable = load_labelled(path, tree, trim=True)
    assert [u["patient_id"] for u in usable] == ["a", "d", "e", "f"]
    assert usable[1]["label_path"] == [NOT_COMPLIANT] == usable[2]["label_path"]
    assert usable[3]["label_path"] == [NOT_COMPLIANT]
    assert {u["patient_id"]: u["problem"] for u in unusable} == {
        "b": "no label",
        "c": "label is not a valid path (broken_edge)",
        "g": "label is not a valid path (not_from_root)",
    }


def test_bad_note_records_stop_in_prepare(tree, tmp_path):
    with pytest.raises(InputError, match="duplicate patient_id 'a'"):
        load_labelled(
            write(tmp_path / "d.jsonl", [{"patient_id": "a", "note": "x", "label": ""}] * 2),
            tree,
            True,
        )
    with pytest.raises(InputError, match="record 1 \\(patient a\\): note is missing"):
        load_unlabelled(write(tmp_path / "u.jsonl", [{"patient_id": "a"}]))


def test_a_doubly_annotated_note(tree, tmp_path):
    first = "LUNG-1-1 -> LUNG-1-2 -> LUNG-2-1 -> LUNG-2-3"
    second = "LUNG-1-1 -> LUNG-1-2 -> LUNG-4-1 -> LUNG-4-3"
    records = [
        {"patient_id": "a", "note": "n", "label": first, "annotator": "dr1"},
        {"patient_id": "b", "note": "m", "label": first, "annotator": "dr1"},
        {"patient_id": "a", "note": "n", "label": second, "annotator": "dr2"},
    ]
    path = write(tmp_path / "notes.jsonl", records)
    # a second annotator's label is a label, not a duplicate id; by default the first is scored
    usable, _ = load_labelled(path, tree, trim=True)
    assert [u["patient_id"] for u in usable] == ["a", "b"]
    assert usable[0]["label"] == first and len(usable[0]["labels"]) == 2
    chosen, _ = load_labelled(path, tree, trim=True, primary_annotator="dr2")
    assert chosen[0]["label"] == second and chosen[1]["label"] == first  # b: dr2 did not label
    # agreement between the two: Jaccard {1-1, 1-2} / 6 nodes = 1/3, different final node: 0.
    # A model answering dr1's path twice: 1 and 1 against dr1; 1/3 and 0 against dr2.
    rollouts = pd.DataFrame(
        {
            "patient_id": ["a", "a", "b", "b"],
            "rollout": [0, 1, 0, 1],
            "path": [first] * 4,
            "note_set": "labelled",
        }
    )
    annotator_table(usable, {"m1": rollouts}, tmp_path / "a.tsv", tmp_path / "a.md")
    table = pd.read_csv(tmp_path / "a.tsv", sep="\t").set_index(["scope", "annotator"], drop=False)
    between = table[table["scope"] == "between annotators"].iloc[0]
    assert between["n_notes"] == 1
    assert between["path_overlap"] == pytest.approx(1 / 3) and between["treatment_match"] == 0
    assert table.loc[("m1", "dr1"), ["n_notes", "path_overlap", "treatment_match"]].tolist() == [
        2,
        1.0,
        1.0,
    ]
    assert table.loc[("m1", "dr2"), "path_overlap"] == pytest.approx(1 / 3)
    assert table.loc[("m1", "dr2"), "treatment_match"] == 0.0


def test_a_second_label_needs_the_same_note_and_another_annotator(tree, tmp_path):
    same = [{"patient_id": "a", "note": "n", "label": "", "annotator": "dr1"}] * 2
    with pytest.raises(InputError, match="a second label needs another, named annotator"):
        load_labelled(write(tmp_path / "s.jsonl", same), tree, True)
    other_note = [
        {"patient_id": "a", "note": "n", "label": "", "annotator": "dr1"},
        {"patient_id": "a", "note": "other", "label": "", "annotator": "dr2"},
    ]
    with pytest.raises(InputError, match="carries a different note"):
        load_labelled(write(tmp_path / "o.jsonl", other_note), tree, True)
