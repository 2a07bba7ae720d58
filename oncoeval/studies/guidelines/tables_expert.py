"""Table 1 (path prediction against the expert labels) and the annotators' agreement beside
the models' accuracy per annotator."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...core.io import as_written, write_table
from ...stats.compare import Clustered, interval_note, mean_ci
from . import compliance
from .metrics import against_label, path_overlap, treatment_match
from .parse import INVALID_KINDS, paths_by_patient
from .score import labelled, path_tuple, rollout_scores


def table1_expert(scores, rollouts: dict[str, pd.DataFrame], boot, out, out_md):
    """Table 1, written and returned as written."""
    rows = []
    for model, group in labelled(scores).groupby("model", sort=False):
        ro = rollouts[model]
        ro = ro[ro["note_set"] == "labelled"]
        labels = {r.patient_id: path_tuple(r.label) for r in group.itertuples()}
        per_rollout = rollout_scores({p: lab for p, lab in labels.items() if lab}, ro)
        row = {
            "model": model,
            "n_patients": len(group),
            "n_scored_rollouts": len(per_rollout),
        }
        for metric in ("path_overlap", "treatment_match"):
            # the rollouts of one patient resampled together (workflow.RESAMPLING)
            data = Clustered.of(per_rollout[metric], per_rollout["cluster"])
            mean, lo, hi = mean_ci(per_rollout[metric], boot, per_rollout["cluster"])
            row[metric] = mean
            row[f"{metric}_sem"] = data.standard_error()
            row[f"{metric}_ci_low"], row[f"{metric}_ci_high"] = lo, hi
        mod = group["modal_treatment_correct"].to_numpy(float)
        row["modal_treatment_accuracy"], lo, hi = mean_ci(
            mod, boot, group["patient_id"], kind="binary"
        )
        row["modal_treatment_accuracy_ci_low"], row["modal_treatment_accuracy_ci_high"] = lo, hi
        row["n_rollouts"] = len(ro)
        invalid = ro.loc[~ro["valid"].astype(str).eq("True"), "invalid_reason"].value_counts()
        for kind in INVALID_KINDS:
            row[f"invalid_{kind}"] = int(invalid.get(kind, 0))
        paths = paths_by_patient(ro)
        row.update(
            compliance.count_pairs(
                (p, label) for pid, label in labels.items() for p in paths.get(pid, [])
            )
        )
        rows.append(row)
    df = pd.DataFrame(rows)
    write_table(
        df,
        out,
        out_md,
        title="Table 1: path prediction on expert-labelled notes (mean, SEM, 95% CI)",
        notes=[
            "path_overlap and treatment_match: mean over the scored rollouts of every patient "
            "(equal to the mean over patients of each patient's k-rollout mean when every call "
            "answered); SEM: cluster-robust, by patient. "
            + interval_note(
                "rollout (modal_treatment_accuracy: the patient's note)",
                "patient (its note's k rollouts together)",
                "n_scored_rollouts in n_patients clusters",
                boot,
            ),
            "modal_treatment_accuracy: the modal final node of the k rollouts vs the "
            "label. invalid_*: rollouts by kind of invalid answer (scored as predicted, 0 when "
            "there is no path), except invalid_generation_error: failed calls, left unscored. "
            "tp/fn/fp/tn: rollouts by guideline-compliance cell (positive = "
            "NOT_GUIDELINE_COMPLIANT); unanswered: rollouts without a path.",
        ],
    )
    return as_written(df)


def annotator_table(notes: list[dict], rollouts: dict[str, pd.DataFrame], out, out_md):
    """Agreement between the annotators of doubly annotated notes (path overlap and treatment
    match of one label against the other, every pair of usable labels of a note), beside each
    model's accuracy against each annotator's labels (mean over the k rollouts, then notes)."""
    rows = []
    pairs = []
    for note in notes:
        usable = [lab for lab in note.get("labels") or [] if lab.get("label_path")]
        for i, first in enumerate(usable):
            for second in usable[i + 1 :]:
                a, b = tuple(first["label_path"]), tuple(second["label_path"])
                pairs.append((path_overlap([a, b]), treatment_match(a, b)))
    rows.append(
        {
            "scope": "between annotators",
            "annotator": "",
            "n_notes": len(pairs),
            "path_overlap": float(np.mean([p for p, _ in pairs])) if pairs else np.nan,
            "treatment_match": float(np.mean([t for _, t in pairs])) if pairs else np.nan,
        }
    )
    for model, ro in rollouts.items():
        paths = paths_by_patient(ro[ro["note_set"] == "labelled"])
        per_annotator: dict[str, list[dict]] = {}
        for note in notes:
            for i, lab in enumerate(note.get("labels") or []):
                got = paths.get(note["patient_id"])
                if lab.get("label_path") and got:
                    name = lab.get("annotator") or f"label {i + 1}"
                    per_annotator.setdefault(name, []).append(
                        against_label(got, tuple(lab["label_path"]))
                    )
        for name, scored in per_annotator.items():
            rows.append(
                {
                    "scope": model,
                    "annotator": name,
                    "n_notes": len(scored),
                    "path_overlap": float(np.mean([s["path_overlap"] for s in scored])),
                    "treatment_match": float(np.mean([s["treatment_match"] for s in scored])),
                }
            )
    write_table(
        pd.DataFrame(rows),
        out,
        out_md,
        title="Annotators: agreement between experts beside the models' accuracy per annotator",
        notes=[
            "between annotators: pairs of usable labels of the same note (n_notes = pairs); "
            "model rows: accuracy against that annotator's labels (the notes they labelled)."
        ],
    )
