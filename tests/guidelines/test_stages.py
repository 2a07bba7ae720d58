"""Parse and score stages on small files: invalid answers are kept and counted, never dropped."""

import json

import pandas as pd
import pytest

from oncoeval.studies.guidelines.parse import parse_rollouts
from oncoeval.studies.guidelines.prepare import prepare
from oncoeval.studies.guidelines.score import SCORE_COLUMNS, score_model

from .conftest import DEMO

LABEL = "LUNG-1-1 -> LUNG-1-2 -> LUNG-4-1 -> LUNG-4-3"  # p07


@pytest.fixture
def prepared(tmp_path):
    out = {
        "tree": tmp_path / "tree.json",
        "notes": tmp_path / "notes.jsonl",
        "excluded": tmp_path / "excluded.tsv",
        "guideline_tree": tmp_path / "summary.tsv",
        "guideline_tree_md": tmp_path / "summary.md",
    }
    stats = prepare(
        DEMO / "guideline.json",
        DEMO / "labelled_notes.jsonl",
        DEMO / "unlabelled_notes.jsonl",
        True,
        out,
    )
    assert (stats["labelled_usable"], stats["labelled_excluded"], stats["unlabelled"]) == (11, 1, 3)
    return out


def responses(path, rows):
    path.write_text(
        "".join(
            json.dumps(
                {
                    "request_id": f"{pid}#r{i}",
                    "model": "m",
                    "text": text,
                    "error": error,
                    "meta": {"patient_id": pid, "note_set": "labelled", "rollout": i},
                }
            )
            + "\n"
            for i, (pid, text, error) in enumerate(rows)
        )
    )
    return path


def test_invalid_rollouts_are_recorded_with_their_kind_and_scored_failed_calls_not(
    prepared, tmp_path
):
    resp = responses(
        tmp_path / "resp.jsonl",
        [
            ("p07", json.dumps({"final_path": LABEL}), None),
            (
                "p07",
                "```json\n" + json.dumps({"final_path": LABEL + " -> LUNG-5-1"}) + "\n```",
                None,
            ),
            ("p07", "no idea", None),
            ("p07", None, "HTTP 500 after retries"),
            ("p07", json.dumps({"final_path": "LUNG-1-1 -> LUNG-4-1 -> LUNG-4-3"}), None),
        ],
    )
    rollouts = parse_rollouts(prepared["tree"], resp, True, tmp_path / "rollouts.tsv")
    assert rollouts["invalid_reason"].tolist() == [
        "",
        "not_terminal",
        "no_answer",
        "generation_error",
        "broken_edge",
    ]
    assert rollouts["valid"].tolist() == [True, False, False, False, False]
    scores = score_model(prepared["notes"], tmp_path / "rollouts.tsv", tmp_path / "scores.tsv")
    row = scores.set_index("patient_id").loc["p07"]
    # The failed call (HTTP 500) is no prediction: left out, not scored 0.
    # Scored rollouts vs label: 1, 4/5, 0, 3/4 (path overlap); finals 4-3, 5-1, -, 4-3
    assert row["path_overlap"] == pytest.approx((1 + 4 / 5 + 0 + 3 / 4) / 4)
    assert row["treatment_match"] == pytest.approx(2 / 4)
    assert row["self_treatment_share"] == pytest.approx(2 / 4)
    assert row["self_path_overlap"] == 0.0  # unparseable rollouts share no node
    assert row["modal_treatment"] == "LUNG-4-3" and row["modal_treatment_correct"] == 1.0
    assert (row["n_rollouts"], row["n_valid"]) == (4, 1)
    on_disk = pd.read_csv(tmp_path / "scores.tsv", sep="\t")
    assert list(on_disk.columns) == SCORE_COLUMNS  # as declared by the score stage


def test_a_patient_whose_calls_all_failed_is_unscored(prepared, tmp_path):
    resp = responses(tmp_path / "resp.jsonl", [("p07", None, "AuthenticationError 401")] * 2)
    parse_rollouts(prepared["tree"], resp, True, tmp_path / "rollouts.tsv")
    scores = score_model(prepared["notes"], tmp_path / "rollouts.tsv", tmp_path / "scores.tsv")
    row = scores.set_index("patient_id").loc["p07"]
    assert pd.isna(row["path_overlap"]) and pd.isna(row["treatment_match"])
    assert row["n_rollouts"] == 0
