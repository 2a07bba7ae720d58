"""File-to-file stages of the study (called by the thin scripts under scripts/guidelines/).

prepare -> prompt -> (generate) -> parse -> score, and the synthetic-supervision steps. Each
function reads its input files and writes its outputs; file layouts are documented in
config/README.md (### guidelines) and in the functions below.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd

from ...io import atomic_write, read_jsonl, write_jsonl, write_table
from ...records import Response, read_responses, write_requests
from . import synthetic
from .metrics import against_label, path_overlap, self_consistency
from .notes import load_labelled, load_unlabelled, read_records
from .parse import check_path, format_path, parse_answer, trim_surveillance
from .prompts import read_template, rollout_requests, sampling_params
from .tree import NOT_COMPLIANT, load_tree, tree_from_dict

log = logging.getLogger(__name__)

ROLLOUT_COLUMNS = [
    "patient_id",
    "rollout",
    "path",
    "valid",
    "invalid_reason",
    "note_set",
    "answer",
    "parse_method",
]
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


# ---------------------------------------------------------------- prepare
def prepare(tree_path, labelled_path, unlabelled_path, trim, out: dict, primary_annotator=None):
    """Validate the inputs and write the canonical tree, notes, excluded labels, tree summary."""
    tree = load_tree(tree_path)
    seen: dict = {}
    usable, unusable = load_labelled(labelled_path, tree, trim, seen, primary_annotator)
    unlabelled = load_unlabelled(unlabelled_path, seen) if unlabelled_path else []
    with atomic_write(out["tree"]) as handle:
        json.dump(tree.to_dict(), handle, indent=1, ensure_ascii=False)
    notes = [{**r, "note_set": "labelled"} for r in usable] + [
        {**r, "note_set": "unlabelled", "label": "", "label_path": []} for r in unlabelled
    ]
    write_jsonl(out["notes"], notes)
    excluded = pd.DataFrame(unusable, columns=["patient_id", "label", "problem", "annotator"])
    write_table(excluded, out["excluded"])
    stats = tree.stats()
    stats.update(
        labelled_usable=len(usable),
        labelled_excluded=len(unusable),
        unlabelled=len(unlabelled),
        doubly_annotated=sum(len(r["labels"]) > 1 for r in usable + unusable),
    )
    notes_md = [f"Excluded (unusable label): {r['patient_id']} ({r['problem']})" for r in unusable]
    write_table(
        pd.DataFrame([stats]),
        out["summary"],
        out["summary_md"],
        title="Guideline tree and notes",
        notes=notes_md or ["No patient was excluded."],
    )
    log.info(
        "tree %s; %d usable, %d unusable, %d unlabelled",
        stats,
        *map(len, (usable, unusable, unlabelled)),
    )
    return stats


def load_prepared_tree(path):
    return tree_from_dict(json.loads(Path(path).read_text(encoding="utf-8")), path)


# ---------------------------------------------------------------- prompt
def rollouts_request_set(tree_path, notes_path, template_path, rollouts: dict, out) -> int:
    tree = load_prepared_tree(tree_path)
    notes = read_jsonl(notes_path)
    requests = rollout_requests(
        notes,
        tree,
        read_template(template_path),
        k=int(rollouts["k"]),
        temperature=float(rollouts["temperature"]),
        max_new_tokens=int(rollouts["max_new_tokens"]),
        seed=int(rollouts["seed"]),
        top_p=rollouts.get("top_p"),
    )
    write_requests(out, requests)
    return len(requests)


# ---------------------------------------------------------------- parse
def parse_response(tree, resp: Response, trim: bool) -> dict:
    """One rollout row: the parsed (and trimmed) path, its validity and why it is invalid."""
    if resp.error:
        return {"path": "", "valid": False, "invalid_reason": "generation_error", "answer": "none"}
    parsed = parse_answer(resp.text)
    if not parsed.ok:
        return {"path": "", "valid": False, "invalid_reason": parsed.reason, "answer": "none"}
    path = trim_surveillance(tree, parsed.path) if trim else parsed.path
    problem = check_path(tree, path)
    return {
        "path": format_path(path),
        "valid": problem is None,
        "invalid_reason": problem or "",
        "answer": "not_compliant" if path == (NOT_COMPLIANT,) else "path",
        "parse_method": parsed.method,
    }


def parse_rollouts(tree_path, responses_path, trim: bool, out) -> pd.DataFrame:
    tree = load_prepared_tree(tree_path)
    rows = []
    for resp in read_responses(responses_path):
        meta = resp.meta or {}
        row = {
            "patient_id": meta.get("patient_id", resp.request_id.rsplit("#r", 1)[0]),
            "rollout": int(meta.get("rollout", resp.request_id.rsplit("#r", 1)[-1])),
            "note_set": meta.get("note_set", ""),
            "parse_method": "",
        }
        row.update(parse_response(tree, resp, trim))
        rows.append(row)
    df = pd.DataFrame(rows, columns=ROLLOUT_COLUMNS)
    write_table(df, out)
    counts = df.loc[~df["valid"], "invalid_reason"].value_counts().to_dict()
    log.info("%d rollouts, %d valid; invalid by kind: %s", len(df), int(df["valid"].sum()), counts)
    return df


def _path(value):
    if value is None or (isinstance(value, float) and np.isnan(value)) or value == "":
        return None
    return tuple(p.strip() for p in str(value).split("->"))


def paths_by_patient(rollouts: pd.DataFrame) -> dict[str, list]:
    """Each patient's rollout paths; failed calls are no prediction and are left out (unscored)."""
    out: dict[str, list] = {}
    answered = rollouts[rollouts["invalid_reason"].astype(str) != "generation_error"]
    for row in answered.sort_values(["patient_id", "rollout"]).itertuples():
        out.setdefault(str(row.patient_id), []).append(_path(row.path))
    return out


# ---------------------------------------------------------------- score
def score_model(notes_path, rollouts_path, out) -> pd.DataFrame:
    """Per note: scores against the expert label (labelled notes) and self-consistency."""
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
    return df


def read_scores(path, model=None) -> pd.DataFrame:
    df = pd.read_csv(path, sep="\t", dtype={"patient_id": str, "modal_path": str, "label": str})
    for col in ("modal_path", "modal_treatment", "label"):
        df[col] = df[col].fillna("")
    if model is not None:
        df.insert(0, "model", model)
    return df


def read_rollouts(path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype={"patient_id": str}, keep_default_na=False)


# ---------------------------------------------------------------- synthetic supervision
def style_examples(path, max_chars: int) -> list[str]:
    """Style examples for the generator: notes outside the evaluated set (a file of records with
    ``note``), each cut to ``max_chars``; none without a file or with ``max_chars`` 0."""
    if not path or max_chars <= 0:
        return []
    return [r["note"][:max_chars] for r in read_records(path) if str(r.get("note", "")).strip()]


def synth_targets(tree_path, examples_path, synth: dict, templates: dict, out: dict) -> None:
    """Targets, the structured-record requests and the unstructured-note requests."""
    tree = load_prepared_tree(tree_path)
    targets = synthetic.sample_targets(tree, int(synth["n_targets"]), int(synth["seed"]))
    if len(targets) < int(synth["n_targets"]):
        log.warning(
            "%d distinct target paths of %s asked (the tree has %d)",
            len(targets),
            synth["n_targets"],
            synthetic.count_paths(tree),
        )
    write_jsonl(out["targets"], targets)
    params = sampling_params(synth["temperature"], synth["max_new_tokens"], synth["seed"])
    variants = synth["variants"]
    records = synthetic.record_requests(tree, targets, read_template(templates["record"]), params)
    write_requests(out["records"], records if "structured" in variants else [])
    examples = style_examples(examples_path, int(synth["example_chars"]))
    notes = synthetic.note_requests(
        tree, targets, read_template(templates["unstructured"]), params, examples
    )
    write_requests(out["unstructured"], notes if "unstructured" in variants else [])


def _responses(path) -> dict:
    return {r.request_id: r for r in read_responses(path)} if path else {}


def synth_record_check_requests(tree_path, targets_path, records_path, synth, template, out):
    """The generator predicts the path back from each structured record it wrote."""
    tree = load_prepared_tree(tree_path)
    params = sampling_params(synth["temperature"], synth["predict_max_new_tokens"], synth["seed"])
    requests = synthetic.record_predict_requests(
        tree,
        read_jsonl(targets_path),
        _responses(records_path),
        read_template(template),
        params,
    )
    write_requests(out, requests if "structured" in synth["variants"] else [])


def synth_structured_notes(
    tree_path,
    examples_path,
    targets_path,
    records_path,
    record_predict_path,
    synth,
    trim,
    template,
    out: dict,
):
    """Structured-note requests from the records whose path check passed; the check table."""
    tree = load_prepared_tree(tree_path)
    targets = read_jsonl(targets_path)
    records = _responses(records_path)
    checks = synthetic.record_check(
        tree, targets, records, _responses(record_predict_path), bool(trim)
    )
    write_jsonl(out["check"], checks)
    params = sampling_params(synth["temperature"], synth["max_new_tokens"], synth["seed"])
    requests = synthetic.note_requests(
        tree,
        targets,
        read_template(template),
        params,
        style_examples(examples_path, int(synth["example_chars"])),
        records=records,
        passed={c["synth_id"] for c in checks if c["decision"] == "ok"},
    )
    write_requests(out["requests"], requests if "structured" in synth["variants"] else [])


def synth_collect(tree_path, targets_path, note_responses: list, check_path_, synth, template, out):
    """Synthetic notes and the ``synth_predict`` request set (generator and evaluated models)."""
    tree = load_prepared_tree(tree_path)
    responses = {}
    for path in note_responses:
        responses.update(_responses(path))
    checks = {c["synth_id"]: c["decision"] for c in read_jsonl(check_path_)} if check_path_ else {}
    notes = synthetic.collect_notes(read_jsonl(targets_path), responses, synth["variants"], checks)
    write_jsonl(out["notes"], notes)
    usable = [
        {"patient_id": n["item_id"], "note": n["note"], "note_set": "synthetic"}
        for n in notes
        if n["status"] == "ok"
    ]
    requests = rollout_requests(
        usable,
        tree,
        read_template(template),
        k=int(synth["rollouts"]),
        temperature=float(synth["temperature"]),
        max_new_tokens=int(synth["predict_max_new_tokens"]),
        seed=int(synth["seed"]),
    )
    write_requests(out["predict"], requests)


def synth_predictions(tree, responses_path, trim) -> dict[str, list]:
    """item_id -> list of predicted paths (None when unparseable), one per rollout."""
    out: dict[str, list] = {}
    for resp in read_responses(responses_path):
        item = resp.request_id.rsplit("#r", 1)[0]
        out.setdefault(item, []).append(synthetic.predicted_path(tree, resp, trim))
    return out


def _generator_predictions(tree, path, trim):
    """(trimmed, untrimmed) first prediction per synthetic note of the generator."""
    trimmed = {k: v[0] for k, v in synth_predictions(tree, path, trim).items()}
    raw = {k: v[0] for k, v in synth_predictions(tree, path, False).items()}
    return trimmed, raw


def synth_choose(tree_path, notes_path, generator_predict, trim, synth, template, out):
    tree = load_prepared_tree(tree_path)
    preds, raw = _generator_predictions(tree, generator_predict, trim)
    params = sampling_params(0.0, synth["choose_max_new_tokens"], synth["seed"])
    requests = synthetic.choose_requests(
        tree,
        read_jsonl(notes_path),
        preds,
        read_template(template),
        params,
        raw=raw,
        partial_to_chooser=bool(synth.get("partial_to_chooser", False)),
    )
    write_requests(out, requests)


def synth_benchmark(
    tree_path, notes_path, generator_predict, choose_path, trim, out, out_md, synth=None
):
    synth = synth or {}
    tree = load_prepared_tree(tree_path)
    preds, raw = _generator_predictions(tree, generator_predict, trim)
    choices = _responses(choose_path)
    notes = read_jsonl(notes_path)
    rows = synthetic.benchmark_rows(
        tree,
        notes,
        preds,
        choices,
        raw=raw,
        partial_to_chooser=bool(synth.get("partial_to_chooser", False)),
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
            f"{distinct} distinct target paths ({synth.get('n_targets', '?')} asked; the tree "
            f"has {synthetic.count_paths(tree)}); no target repeats."
        ]
        + [f"{v} / {d}: {n}" for (v, d), n in counts.items()],
    )


# ---------------------------------------------------------------- per-model proxy scores
def proxy_scores_model(
    model, tree_path, scores_path, rollouts_path, synth, pool, delta, trim, boot, out
):
    """Self-consistency and synthetic proxy scores of one model (cross-model ones need all)."""
    from . import proxies

    scores = read_scores(scores_path)
    paths = paths_by_patient(read_rollouts(rollouts_path))
    rows = proxies.self_consistency_scores(model, scores, paths, pool, float(delta), boot)
    benchmark, preds = None, {}
    if synth:
        tree = load_prepared_tree(tree_path)
        benchmark = pd.read_csv(synth["benchmark"], sep="\t", keep_default_na=False)
        preds = synth_predictions(tree, synth["predict"], trim)
    rows += proxies.synthetic_scores(model, benchmark, preds, boot)
    write_table(pd.DataFrame(rows, columns=proxies.COLUMNS), out)
