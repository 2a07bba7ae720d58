"""Prepare stage: validate the guideline tree and the notes; write the canonical inputs.

Outputs (workflow.OUTPUTS_PREPARE): the canonical tree, the notes of every note set, the labels
that cannot be scored, and the tree summary table. File layouts: docs/studies.md (guidelines).
"""

from __future__ import annotations

import json
import logging

import pandas as pd

from ...core.io import atomic_write, write_jsonl, write_table
from .notes import load_labelled, load_unlabelled
from .tree import load_tree

log = logging.getLogger(__name__)


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
        out["guideline_tree"],
        out["guideline_tree_md"],
        title="Guideline tree and notes",
        notes=notes_md or ["No patient was excluded."],
    )
    log.info(
        "tree %s; %d usable, %d unusable, %d unlabelled",
        stats,
        *map(len, (usable, unusable, unlabelled)),
    )
    return stats
