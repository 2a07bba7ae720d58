"""Synthetic supervision pieces and the notes loader."""

import json
from collections import Counter

import pandas as pd
import pytest

from oncoeval.core.errors import InputError
from oncoeval.core.records import Response
from oncoeval.studies.guidelines.notes import load_labelled, load_unlabelled
from oncoeval.studies.guidelines.parse import check_path
from oncoeval.studies.guidelines.synthetic import (
    benchmark_rows,
    choose_requests,
    collect_notes,
    count_paths,
    note_requests,
    parse_choice,
    record_check,
    sample_targets,
)
from oncoeval.studies.guidelines.tables_expert import annotator_table
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
    # asked for more than the tree has: every distinct path once, never a repeat
    every = sample_targets(tree, 1000, seed=0)
    assert len(every) == count_paths(tree) == len({t["target_path"] for t in every})


def test_parse_choice():
    assert parse_choice('{"choice": "A"}') == "A"
    assert parse_choice('```json\n{"choice": "B"}\n```') == "B"
    assert parse_choice("Path B fits better.") == "B"
    assert parse_choice("A or B, hard to say") is None
    assert parse_choice(None) is None


T = "LUNG-1-1 -> LUNG-1-2 -> LUNG-2-1 -> LUNG-2-3"
OTHER = ("LUNG-1-1", "LUNG-1-3")


def note_row(i, variant="unstructured", status="ok"):
    return {
        "item_id": f"s{i}|{variant}",
        "synth_id": f"s{i}",
        "variant": variant,
        "target_path": T,
        "status": status,
        "note": "x" if status == "ok" else "",
    }


def r(rid, text):
    return Response(rid, "judge", text)


def test_pair_kept_when_regenerated_or_chosen_in_both_orders(tree):
    notes = [note_row(i) for i in range(4)] + [note_row(9, "structured", "empty_note")]
    preds = {
        "s0|unstructured": tuple(T.split(" -> ")),
        "s1|unstructured": OTHER,
        "s2|unstructured": OTHER,
        "s3|unstructured": OTHER,
    }
    choices = {
        "s1|unstructured|target_first": r("", '{"choice": "A"}'),
        "s1|unstructured|target_second": r("", '{"choice": "B"}'),  # target wins twice
        "s2|unstructured|target_first": r("", '{"choice": "A"}'),
        "s2|unstructured|target_second": r("", '{"choice": "A"}'),  # position bias: dropped
        "s3|unstructured|target_first": r("", "unsure"),
        "s3|unstructured|target_second": r("", '{"choice": "B"}'),
    }
    rows = {
        x["item_id"]: x
        for x in benchmark_rows(tree, notes, preds, choices, partial_to_chooser=False)
    }
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


def test_failed_generator_prediction_and_contradicting_record_are_dropped_with_reasons(tree):
    targets = [{"synth_id": "s1", "target_path": T}, {"synth_id": "s2", "target_path": T}]
    records = {f"s{i}|structured": r(f"s{i}|structured", '{"age": 70}') for i in (1, 2)}
    # s1's record leads back to another path (the public pipeline's steps 3-4 drop it);
    # s2's record leads back to its target
    back = {"s1|record": r("s1|record", json.dumps({"final_path": " -> ".join(OTHER)}))}
    back["s2|record"] = r("s2|record", json.dumps({"final_path": T}))
    checks = record_check(tree, targets, records, back, trim=True)
    assert [c["decision"] for c in checks] == ["record_path_mismatch", "ok"]
    # no structured note is written from s1's record
    requests = note_requests(tree, targets, "{record}", {}, [], records=records, passed={"s2"})
    assert [q.request_id for q in requests] == ["s2|structured"]
    notes = collect_notes(
        targets,
        {
            "s2|structured": r("", "note"),
            "s1|unstructured": r("", "n"),
            "s2|unstructured": r("", "n"),
        },
        ["structured", "unstructured"],
        {c["synth_id"]: c["decision"] for c in checks},
    )
    # the generator's prediction on s1's unstructured note failed; on s2's it names a node the
    # tree does not have: neither reaches the chooser
    preds = {
        "s1|unstructured": None,
        "s2|structured": tuple(T.split(" -> ")),
        "s2|unstructured": ("LUNG-1-1", "LUNG-9-9"),
    }
    assert (
        choose_requests(tree, notes, preds, "{path_a} {path_b}", {}, partial_to_chooser=False) == []
    )
    rows = benchmark_rows(tree, notes, preds, {}, partial_to_chooser=False)
    decisions = Counter(x["decision"] for x in rows)
    assert decisions == {
        "record_path_mismatch": 1,
        "generator_unparseable": 1,
        "regenerated": 1,
        "generator_unknown_node": 1,
    }
    assert [x["kept"] for x in rows] == [False, False, True, False]


def test_partial_match_goes_to_the_chooser_only_with_the_option(tree):
    trimmed = tuple(T.split(" -> "))
    raw = {"s0|unstructured": trimmed + ("LUNG-6-1",)}  # only a surveillance tail differs
    preds = {"s0|unstructured": trimmed}
    notes = [note_row(0)]
    assert (
        choose_requests(tree, notes, preds, "{path_a}", {}, raw=raw, partial_to_chooser=False) == []
    )
    asked = choose_requests(tree, notes, preds, "{path_a}", {}, raw=raw, partial_to_chooser=True)
    assert [q.messages[0]["content"] for q in asked] == [T, T + " -> LUNG-6-1"]
    choices = {
        "s0|unstructured|target_first": r("", '{"choice": "A"}'),
        "s0|unstructured|target_second": r("", '{"choice": "A"}'),
    }
    row = benchmark_rows(tree, notes, preds, choices, raw=raw, partial_to_chooser=True)[0]
    assert row["decision"] == "target_not_chosen"


def test_style_examples_rotate_and_never_come_from_evaluated_notes(tree):
    targets = [{"synth_id": f"s{i}", "target_path": T} for i in range(3)]
    asked = note_requests(tree, targets, "{example}", {}, ["first", "second"])
    assert [q.messages[0]["content"] for q in asked] == ["first", "second", "first"]
    assert (
        note_requests(tree, targets[:1], "{example}", {}, [])[0].messages[0]["content"] == "(none)"
    )


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
            "invalid_reason": "",
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
