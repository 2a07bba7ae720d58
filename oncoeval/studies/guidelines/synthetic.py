"""Synthetic supervision (§3.2.1): target paths, generated notes, and the LLM-preference filter.

1. Target paths are sampled from the tree (seeded random walks from the root to the first
   treatment or information-limited node), all distinct: fewer than asked when the walks find
   no more (the benchmark table says how many, and how many the tree has).
2. The generator writes a note for each target: ``unstructured`` directly from the path;
   ``structured`` first fills a structured record conditioned on the path, predicts the path
   back from the record (``synth_record_predict``), and writes the note only from a record whose
   path matches the target (the public pipeline's steps 3-4); other records are dropped with a
   counted reason (``record_unparseable``, ``record_unknown_node``, ``record_path_mismatch``).
3. The generator predicts the path from each note (request set ``synth_predict``, which every
   evaluated model answers too). A prediction equal to the target keeps the pair; an unparseable
   or failed prediction drops it (``generator_unparseable``), as does one naming nodes that are
   not in the tree (``generator_unknown_node``); otherwise the chooser sees both paths in both
   orders (``synth_choose``), and the pair is kept only if the target wins both times. With
   ``partial_to_chooser`` a prediction that equals the target only once trailing surveillance
   nodes are trimmed goes to the chooser too (the public pipeline's "partial" verdict).
"""

from __future__ import annotations

import random
import re

from ...core.parsing import too_long
from ...core.records import Request, Response, read_responses
from .parse import check_path, format_path, parse_answer, trim_surveillance
from .prompts import describe_path, fill, guideline_fields
from .tree import GuidelineTree

VARIANTS = ("structured", "unstructured")


def count_paths(tree: GuidelineTree) -> int:
    """Distinct root -> first-terminal paths of the tree (the most distinct targets there are)."""
    memo: dict[str, int] = {}

    def paths_from(nid: str) -> int:
        if nid not in memo:
            node = tree.nodes[nid]
            memo[nid] = 1 if node.terminal else sum(paths_from(c) for c in node.children)
        return memo[nid]

    return paths_from(tree.root)


def sample_targets(tree: GuidelineTree, n: int, seed: int, max_tries: int | None = None):
    """Up to ``n`` distinct random-walk paths root -> terminal (never a repeated target): fewer
    when the tree has fewer, or when ``max_tries`` walks (default 100 per target) find no more."""
    rng = random.Random(seed)
    n = min(n, count_paths(tree))
    max_tries = max_tries or 100 * max(n, 1)
    found: list[tuple[str, ...]] = []
    tries = 0
    while len(found) < n and tries < max_tries:
        tries += 1
        path = [tree.root]
        while not tree.nodes[path[-1]].terminal:
            path.append(rng.choice(tree.nodes[path[-1]].children))
        path = tuple(path)
        if path not in found:
            found.append(path)
    return [
        {"synth_id": f"syn{i + 1:02d}", "target_path": format_path(p)} for i, p in enumerate(found)
    ]


def record_requests(tree, targets, template, params) -> list[Request]:
    guideline = guideline_fields(tree)
    return [
        Request(
            f"{t['synth_id']}|structured",
            [
                {
                    "role": "user",
                    "content": fill(
                        template,
                        path=describe_path(tree, t["target_path"].split(" -> ")),
                        **guideline,
                    ),
                }
            ],
            params,
            {"synth_id": t["synth_id"], "variant": "structured"},
        )
        for t in targets
    ]


def example_for(examples: list[str], index: int) -> str:
    """The style example of the ``index``-th target: the examples in turn, "(none)" without."""
    return examples[index % len(examples)] if examples else "(none)"


def note_requests(
    tree, targets, template, params, examples: list[str], records=None, passed=None
) -> list[Request]:
    """Unstructured notes (``records`` None) or structured ones from the generated records whose
    path check passed (``passed``: synth ids). Each target gets its own style example, taken in
    turn from ``examples`` (notes outside the evaluated set)."""
    variant = "unstructured" if records is None else "structured"
    guideline = guideline_fields(tree)
    out = []
    for i, t in enumerate(targets):
        fields = {
            "path": describe_path(tree, t["target_path"].split(" -> ")),
            "example": example_for(examples, i),
            **guideline,
        }
        if records is not None:
            resp = records.get(f"{t['synth_id']}|structured")
            if resp is None or resp.error or not (resp.text or "").strip():
                continue  # no record to write from; counted when the notes are collected
            if passed is not None and t["synth_id"] not in passed:
                continue  # the record does not lead back to its path; counted by the check
            fields["record"] = resp.text.strip()
        out.append(
            Request(
                f"{t['synth_id']}|{variant}",
                [{"role": "user", "content": fill(template, **fields)}],
                params,
                {"synth_id": t["synth_id"], "variant": variant},
            )
        )
    return out


def record_predict_requests(tree, targets, records: dict, template, params) -> list[Request]:
    """The generator traces the path back from each structured record it wrote."""
    guideline = guideline_fields(tree)
    out = []
    for t in targets:
        resp = records.get(f"{t['synth_id']}|structured")
        if resp is None or resp.error or not (resp.text or "").strip():
            continue
        content = fill(template, record=resp.text.strip(), **guideline)
        out.append(
            Request(
                f"{t['synth_id']}|record",
                [{"role": "user", "content": content}],
                params,
                {"synth_id": t["synth_id"], "variant": "structured"},
            )
        )
    return out


def record_check(tree, targets, records: dict, predictions: dict, trim: bool) -> list[dict]:
    """Per target with a record: the path predicted from it and whether it matches the target
    (after trimming surveillance, so a surveillance-only difference passes as the public
    pipeline's "partial" verdict does)."""
    rows = []
    for t in targets:
        resp = records.get(f"{t['synth_id']}|structured")
        if resp is None or resp.error or not (resp.text or "").strip():
            continue
        pred = predicted_path(tree, predictions.get(f"{t['synth_id']}|record"), trim)
        target = tuple(t["target_path"].split(" -> "))
        if pred is None:
            decision = "record_unparseable"
        elif any(n not in tree for n in pred) and pred != ("NOT_GUIDELINE_COMPLIANT",):
            decision = "record_unknown_node"
        elif pred != target:
            decision = "record_path_mismatch"
        else:
            decision = "ok"
        rows.append(
            {"synth_id": t["synth_id"], "record_path": format_path(pred), "decision": decision}
        )
    return rows


def collect_notes(targets, responses: dict[str, Response], variants, checks=None) -> list[dict]:
    """One row per (target, variant) with the generated note or why there is none; ``checks``:
    synth id -> record-check decision (structured variant)."""
    checks = checks or {}
    rows = []
    for t in targets:
        for variant in variants:
            rid = f"{t['synth_id']}|{variant}"
            resp = responses.get(rid)
            check = checks.get(t["synth_id"], "ok") if variant == "structured" else "ok"
            if check != "ok":
                status, note = check, ""
            elif resp is None:
                status, note = "no_record", ""
            elif resp.error:
                status, note = "generation_error", ""
            elif not (resp.text or "").strip():
                status, note = "empty_note", ""
            else:
                status, note = "ok", resp.text.strip()
            rows.append({"item_id": rid, **t, "variant": variant, "status": status, "note": note})
    return rows


def predicted_path(tree: GuidelineTree, resp: Response | None, trim: bool):
    if resp is None or resp.error:
        return None
    parsed = parse_answer(resp.text)
    if not parsed.ok:
        return None
    return trim_surveillance(tree, parsed.path) if trim else parsed.path


def generator_decision(tree, target: str, pred, raw, partial_to_chooser: bool) -> str:
    """What the generator's prediction on its own note decides: ``regenerated`` (kept),
    ``to_chooser``, or a counted refusal (``generator_unparseable``, ``generator_unknown_node``).
    ``raw``: the untrimmed prediction, for ``partial_to_chooser``."""
    target = tuple(target.split(" -> "))
    if pred is None:
        return "generator_unparseable"
    if pred == target:
        partial = raw is not None and tuple(raw) != target
        return "to_chooser" if partial and partial_to_chooser else "regenerated"
    if check_path(tree, pred) == "unknown_node":
        return "generator_unknown_node"
    return "to_chooser"


def choose_requests(
    tree, notes, predictions: dict, template, params, *, raw=None, partial_to_chooser: bool
) -> list[Request]:
    """Both orders for every usable note whose generator prediction goes to the chooser."""
    guideline = guideline_fields(tree)
    raw = raw or {}
    out = []
    for row in notes:
        if row["status"] != "ok":
            continue
        pred = predictions.get(row["item_id"])
        item_raw = raw.get(row["item_id"])
        decision = generator_decision(tree, row["target_path"], pred, item_raw, partial_to_chooser)
        if decision != "to_chooser":
            continue
        other = format_path(item_raw if pred == tuple(row["target_path"].split(" -> ")) else pred)
        for order, (a, b) in (
            ("target_first", (row["target_path"], other)),
            ("target_second", (other, row["target_path"])),
        ):
            out.append(
                Request(
                    f"{row['item_id']}|{order}",
                    [
                        {
                            "role": "user",
                            "content": fill(
                                template,
                                note=row["note"],
                                **guideline,
                                path_a=a,
                                path_b=b,
                            ),
                        }
                    ],
                    params,
                    {"item_id": row["item_id"], "order": order},
                )
            )
    return out


def parse_choice(text: str | None) -> str | None:
    """'A' or 'B' from a chooser answer (JSON ``{"choice": "A"}`` or free text), else None."""
    if not text or too_long(text):
        return None
    m = re.search(r"\"?choice\"?\s*[:=]\s*\"?\s*(?:path\s*)?([AB])\b", text, re.I)
    if m:
        return m.group(1).upper()
    letters = re.findall(r"\b(?:path\s+)?([AB])\b", text)
    return letters[0] if len(set(letters)) == 1 else None


def benchmark_rows(
    tree,
    notes,
    predictions: dict,
    choices: dict[str, Response],
    *,
    raw=None,
    partial_to_chooser: bool,
) -> list[dict]:
    """Keep/drop decision for every synthetic note (see the module docstring)."""
    raw = raw or {}
    rows = []
    for row in notes:
        out = {k: row[k] for k in ("item_id", "synth_id", "variant", "target_path", "status")}
        pred = predictions.get(row["item_id"])
        out["generator_path"] = format_path(pred) if pred else ""
        decision = generator_decision(
            tree, row["target_path"], pred, raw.get(row["item_id"]), partial_to_chooser
        )
        if row["status"] != "ok":
            out.update(kept=False, decision=row["status"])
        elif decision == "regenerated":
            out.update(kept=True, decision="regenerated")
        elif decision != "to_chooser":
            out.update(kept=False, decision=decision)
        else:
            first = parse_choice(_text(choices.get(f"{row['item_id']}|target_first")))
            second = parse_choice(_text(choices.get(f"{row['item_id']}|target_second")))
            if first is None or second is None:
                out.update(kept=False, decision="chooser_unparseable")
            elif first == "A" and second == "B":
                out.update(kept=True, decision="chosen_both_orders")
            else:
                out.update(kept=False, decision="target_not_chosen")
        rows.append(out)
    return rows


def _text(resp: Response | None) -> str | None:
    return None if resp is None or resp.error else resp.text


# ---------------------------------------------------------------- response files
def responses_by_id(path) -> dict[str, Response]:
    """request_id -> response of a responses file; empty without a file (no judge)."""
    return {r.request_id: r for r in read_responses(path)} if path else {}


def read_predictions(tree, responses_path, trim) -> dict[str, list]:
    """item_id -> list of predicted paths (None when unparseable), one per rollout."""
    out: dict[str, list] = {}
    for resp in read_responses(responses_path):
        item = resp.request_id.rsplit("#r", 1)[0]
        out.setdefault(item, []).append(predicted_path(tree, resp, trim))
    return out


def generator_predictions(tree, path, trim):
    """(trimmed, untrimmed) first prediction per synthetic note of the generator."""
    trimmed = {k: v[0] for k, v in read_predictions(tree, path, trim).items()}
    raw = {k: v[0] for k, v in read_predictions(tree, path, False).items()}
    return trimmed, raw
