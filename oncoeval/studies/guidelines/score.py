"""Score stage: per note, the scores against the expert label and the self-consistency of the
k rollouts; per model, the self-consistency and synthetic proxy scores; the synthetic benchmark
(which synthetic notes are kept).
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ...core.io import read_jsonl, write_table
from . import proxies, synthetic
from .metrics import against_label, path_overlap, self_consistency, treatment_match
from .parse import format_path, paths_by_patient, read_rollouts
from .tree import load_prepared_tree

log = logging.getLogger(__name__)

SCORE_COLUMNS = [
    "patient_id",
    "path_overlap",
    "treatment_match",
    "self_path_overlap",
    "self_treatment_share",
    "modal_path",
    "modal_treatment",
    "note_set",
    "label",
    "modal_treatment_correct",
    "n_rollouts",
    "n_valid",
    "modal_path_overlap",
]


# The per-unit score file (rollout_scores/{model}.tsv): one row per rollout of an expert-labelled
# note. unit: the rollout (its request id, patient_id#r<rollout>); cluster: the patient, whose note's rollouts (and
# any further notes) are resampled together (workflow.RESAMPLING).
ROLLOUT_SCORE_COLUMNS = [
    "unit", "cluster", "patient_id", "rollout", "path_overlap", "treatment_match"
]  # fmt: skip


def rollout_scores(labels: dict, rollouts: pd.DataFrame) -> pd.DataFrame:
    """Per rollout of a labelled note (``labels``: patient_id -> label path): its path overlap
    and treatment match with the label. Failed calls are left out (unscored), as in
    ``against_label``, whose per-note means these rollouts make up."""
    answered = rollouts[rollouts["invalid_reason"].astype(str) != "generation_error"]
    rows = []
    for r in answered.sort_values(["patient_id", "rollout"]).itertuples():
        label = labels.get(str(r.patient_id))
        if label is None:
            continue
        path = path_tuple(r.path)
        rows.append(
            {
                "unit": f"{r.patient_id}#r{r.rollout}",  # the rollout's request id
                "cluster": str(r.patient_id),
                "patient_id": str(r.patient_id),
                "rollout": r.rollout,
                "path_overlap": path_overlap([path, label]),
                "treatment_match": treatment_match(path, label),
            }
        )
    return pd.DataFrame(rows, columns=ROLLOUT_SCORE_COLUMNS)


def score_model(notes_path, rollouts_path, out, rollouts_out=None) -> pd.DataFrame:
    """Per note: scores against the expert label (labelled notes) and self-consistency; per
    rollout of a labelled note (``rollouts_out``): its scores against the label."""
    notes = read_jsonl(notes_path)
    rollouts = pd.read_csv(
        rollouts_path, sep="\t", dtype={"patient_id": str}, keep_default_na=False
    )
    by_patient = paths_by_patient(rollouts)
    valid = rollouts.groupby("patient_id")["valid"].apply(
        lambda s: int(s.astype(str).eq("True").sum())
    )
    rows = []
    for note in notes:
        pid = note["patient_id"]
        paths = by_patient.get(pid, [])
        cons = self_consistency(paths) if paths else {}
        label = tuple(note["label_path"]) if note.get("label_path") else None
        row = {
            "patient_id": pid,
            "note_set": note["note_set"],
            "label": note.get("label", ""),
            "self_path_overlap": cons.get("self_path_overlap", np.nan),
            "self_treatment_share": cons.get("self_treatment_share", np.nan),
            "modal_path": format_path(cons.get("modal_path")),
            "modal_treatment": cons.get("modal_treatment") or "",
            "n_rollouts": len(paths),
            "n_valid": int(valid.get(pid, 0)),
            "path_overlap": np.nan,
            "treatment_match": np.nan,
            "modal_treatment_correct": np.nan,
            "modal_path_overlap": np.nan,
        }
        if label is not None and paths:
            row.update(against_label(paths, label))
            row["modal_treatment_correct"] = float(cons.get("modal_treatment") == label[-1])
            # the accuracy Table 3 bins: the modal path against the label
            row["modal_path_overlap"] = path_overlap([cons.get("modal_path"), label])
        rows.append(row)
    df = pd.DataFrame(rows, columns=SCORE_COLUMNS)
    write_table(df, out)
    if rollouts_out is not None:
        labels = {n["patient_id"]: tuple(n["label_path"]) for n in notes if n.get("label_path")}
        write_table(rollout_scores(labels, rollouts), rollouts_out)
    return df


def read_scores(path, model=None) -> pd.DataFrame:
    df = pd.read_csv(path, sep="\t", dtype={"patient_id": str, "modal_path": str, "label": str})
    for col in ("modal_path", "modal_treatment", "label"):
        df[col] = df[col].fillna("")
    if model is not None:
        df.insert(0, "model", model)
    return df


def synth_benchmark(
    tree_path, notes_path, generator_predict, choose_path, trim, out, out_md, synth
):
    """Keep or drop each synthetic note (regenerated, or chosen in both orders)."""
    tree = load_prepared_tree(tree_path)
    preds, raw = synthetic.generator_predictions(tree, generator_predict, trim)
    choices = synthetic.responses_by_id(choose_path)
    notes = read_jsonl(notes_path)
    rows = synthetic.benchmark_rows(
        tree,
        notes,
        preds,
        choices,
        raw=raw,
        partial_to_chooser=bool(synth["partial_to_chooser"]),
    )
    df = pd.DataFrame(rows)
    counts = df.groupby(["variant", "decision"]).size().to_dict() if len(df) else {}
    distinct = len({n["target_path"] for n in notes})
    write_table(
        df,
        out,
        out_md,
        title="Synthetic supervision: kept and dropped synthetic notes",
        notes=[
            f"{distinct} distinct target paths ({synth['n_targets']} asked; the tree "
            f"has {synthetic.count_paths(tree)}); no target repeats."
        ]
        + [f"{v} / {d}: {n}" for (v, d), n in counts.items()],
    )


def proxy_scores_model(model, inputs: dict, out, *, pool, delta, trim, boot):
    """Self-consistency and synthetic proxy scores of one model (cross-model ones need all).

    ``inputs``: the rule's named inputs ``tree``, ``scores``, ``rollouts`` and, when the
    synthetic benchmark runs, ``benchmark`` and ``predict``."""
    scores = read_scores(inputs["scores"])
    paths = paths_by_patient(read_rollouts(inputs["rollouts"]))
    rows = proxies.self_consistency_scores(model, scores, paths, pool, float(delta), boot)
    benchmark, preds = None, {}
    if inputs.get("benchmark"):
        tree = load_prepared_tree(inputs["tree"])
        benchmark = pd.read_csv(inputs["benchmark"], sep="\t", keep_default_na=False)
        preds = synthetic.read_predictions(tree, inputs["predict"], trim)
    rows += proxies.synthetic_scores(model, benchmark, preds, boot)
    write_table(pd.DataFrame(rows, columns=proxies.COLUMNS), out)


def labelled(scores: pd.DataFrame) -> pd.DataFrame:
    """The rows of the expert-labelled notes."""
    return scores[scores["note_set"] == "labelled"]


def path_tuple(value):
    """A path as written in a scores table (``A -> B``), as a tuple of node ids (None if empty)."""
    if not value or (isinstance(value, float) and np.isnan(value)):
        return None
    return tuple(p.strip() for p in str(value).split("->"))
