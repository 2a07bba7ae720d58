"""Requests stage: the k seeded path-prediction requests per note, and the request sets of
synthetic supervision (records, notes, the record check, predictions, chooser).

Each function reads its input files and writes one request set (and what the next step needs).
"""

from __future__ import annotations

import logging

from ...core.io import read_jsonl, write_jsonl
from ...core.records import write_requests
from . import synthetic
from .notes import read_records
from .prompts import read_template, rollout_requests, sampling_params
from .tree import load_prepared_tree

log = logging.getLogger(__name__)


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


def synth_record_check_requests(tree_path, targets_path, records_path, synth, template, out):
    """The generator predicts the path back from each structured record it wrote."""
    tree = load_prepared_tree(tree_path)
    params = sampling_params(synth["temperature"], synth["predict_max_new_tokens"], synth["seed"])
    requests = synthetic.record_predict_requests(
        tree,
        read_jsonl(targets_path),
        synthetic.responses_by_id(records_path),
        read_template(template),
        params,
    )
    write_requests(out, requests if "structured" in synth["variants"] else [])


def synth_structured_notes(inputs: dict, synth: dict, trim, out: dict):
    """Structured-note requests from the records whose path check passed; the check table.

    ``inputs``: ``tree``, ``examples`` (None: no style examples), ``targets``, ``records`` and
    ``record_predict`` (the generator's records and its path check), ``template``."""
    tree = load_prepared_tree(inputs["tree"])
    targets = read_jsonl(inputs["targets"])
    records = synthetic.responses_by_id(inputs["records"])
    checks = synthetic.record_check(
        tree, targets, records, synthetic.responses_by_id(inputs["record_predict"]), bool(trim)
    )
    write_jsonl(out["check"], checks)
    params = sampling_params(synth["temperature"], synth["max_new_tokens"], synth["seed"])
    requests = synthetic.note_requests(
        tree,
        targets,
        read_template(inputs["template"]),
        params,
        style_examples(inputs["examples"], int(synth["example_chars"])),
        records=records,
        passed={c["synth_id"] for c in checks if c["decision"] == "ok"},
    )
    write_requests(out["requests"], requests if "structured" in synth["variants"] else [])


def synth_collect(tree_path, targets_path, note_responses: list, check_path_, synth, template, out):
    """Synthetic notes and the ``synth_predict`` request set (generator and evaluated models)."""
    tree = load_prepared_tree(tree_path)
    responses = {}
    for path in note_responses:
        responses.update(synthetic.responses_by_id(path))
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


def synth_choose(tree_path, notes_path, generator_predict, trim, synth, template, out):
    tree = load_prepared_tree(tree_path)
    preds, raw = synthetic.generator_predictions(tree, generator_predict, trim)
    params = sampling_params(0.0, synth["choose_max_new_tokens"], synth["seed"])
    requests = synthetic.choose_requests(
        tree,
        read_jsonl(notes_path),
        preds,
        read_template(template),
        params,
        raw=raw,
        partial_to_chooser=bool(synth["partial_to_chooser"]),
    )
    write_requests(out, requests)
