"""Synthetic supervision (§3.2.1): target paths, generated notes, and the LLM-preference filter.

1. Target paths are sampled from the tree (seeded random walks from the root to the first
   treatment or information-limited node), distinct where the tree allows.
2. The generator writes a note for each target: ``unstructured`` directly from the path;
   ``structured`` first fills a structured record conditioned on the path, then writes the
   note from the record and the path.
3. The generator predicts the path from each note (request set ``synth_predict``, which every
   evaluated model answers too). A prediction equal to the target keeps the pair; otherwise the
   chooser sees both paths in both orders (``synth_choose``), and the pair is kept only if the
   target wins both times.
"""

from __future__ import annotations

import random
import re

from ...records import Request, Response
from .parse import format_path, parse_answer, trim_surveillance
from .prompts import describe_path, fill, guideline_fields
from .tree import GuidelineTree

VARIANTS = ("structured", "unstructured")
NO_PATH = "(no parseable path was given)"


def sample_targets(tree: GuidelineTree, n: int, seed: int, max_tries: int = 200) -> list[dict]:
    """``n`` random-walk paths root -> terminal, distinct while the tree has new ones to give."""
    rng = random.Random(seed)
    found: list[tuple[str, ...]] = []
    tries = 0
    while len(found) < n and tries < max_tries:
        tries += 1
        path = [tree.root]
        while not tree.nodes[path[-1]].terminal:
            path.append(rng.choice(tree.nodes[path[-1]].children))
        path = tuple(path)
        if path not in found or tries > max_tries // 2:
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


def note_requests(tree, targets, template, params, example: str, records=None) -> list[Request]:
    """Unstructured notes (``records`` None) or structured ones from the generated records."""
    variant = "unstructured" if records is None else "structured"
    guideline = guideline_fields(tree)
    out = []
    for t in targets:
        fields = {
            "path": describe_path(tree, t["target_path"].split(" -> ")),
            "example": example,
            **guideline,
        }
        if records is not None:
            resp = records.get(f"{t['synth_id']}|structured")
            if resp is None or resp.error or not (resp.text or "").strip():
                continue  # no record to write from; counted when the notes are collected
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


def collect_notes(targets, responses: dict[str, Response], variants) -> list[dict]:
    """One row per (target, variant) with the generated note or why there is none."""
    rows = []
    for t in targets:
        for variant in variants:
            rid = f"{t['synth_id']}|{variant}"
            resp = responses.get(rid)
            if resp is None:
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


def choose_requests(tree, notes, predictions: dict, template, params) -> list[Request]:
    """Both orders for every usable note whose generator prediction differs from the target."""
    guideline = guideline_fields(tree)
    out = []
    for row in notes:
        if row["status"] != "ok":
            continue
        pred = predictions.get(row["item_id"])
        target = tuple(row["target_path"].split(" -> "))
        if pred == target:
            continue
        other = format_path(pred) if pred else NO_PATH
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
    if not text:
        return None
    m = re.search(r"\"?choice\"?\s*[:=]\s*\"?\s*(?:path\s*)?([AB])\b", text, re.I)
    if m:
        return m.group(1).upper()
    letters = re.findall(r"\b(?:path\s+)?([AB])\b", text)
    return letters[0] if len(set(letters)) == 1 else None


def benchmark_rows(notes, predictions: dict, choices: dict[str, Response]) -> list[dict]:
    """Keep/drop decision for every synthetic note (see the module docstring)."""
    rows = []
    for row in notes:
        out = {k: row[k] for k in ("item_id", "synth_id", "variant", "target_path", "status")}
        pred = predictions.get(row["item_id"])
        out["generator_path"] = format_path(pred) if pred else ""
        if row["status"] != "ok":
            out.update(kept=False, decision=row["status"])
        elif pred == tuple(row["target_path"].split(" -> ")):
            out.update(kept=True, decision="regenerated")
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
