"""Stored answers of the two replayed demo models (no model is called to make them).

``demo-oracle-replay`` answers every rollout with the demo author's own tracing (the expert label,
or the reference path of an unlabelled note, or the target of a synthetic note);
``demo-noisy-replay`` leaves that path at a random decision node in a share of its rollouts
(seeded). They make the cross-model parts of the default run non-trivial offline; they are
replayed demo outputs, not models. Regenerate with::

    python -m oncoeval.studies.guidelines.demo resources/demo/guidelines 10 6
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from ...core.io import read_jsonl, write_jsonl
from .notes import load_labelled
from .parse import format_path
from .synthetic import VARIANTS, sample_targets
from .tree import NOT_COMPLIANT, GuidelineTree, load_tree


def answer(path) -> str:
    if tuple(path) == (NOT_COMPLIANT,):
        return json.dumps({"final_path": NOT_COMPLIANT, "reason": "care differs from the pathway"})
    return json.dumps({"final_path": format_path(path)})


def perturb(tree: GuidelineTree, path, rng: random.Random):
    """Leave ``path`` at a random node that has another child, then walk to a terminal node."""
    path = list(path)
    forks = [i for i, n in enumerate(path[:-1]) if n in tree and len(tree.nodes[n].children) > 1]
    if not forks:
        return path
    i = rng.choice(forks)
    node = tree.nodes[path[i]]
    new = [c for c in node.children if c != path[i + 1]]
    out = path[: i + 1] + [rng.choice(new)]
    while not tree.nodes[out[-1]].terminal:
        out.append(rng.choice(tree.nodes[out[-1]].children))
    return out


def reference_paths(folder: Path, tree: GuidelineTree) -> dict[str, list]:
    usable, _ = load_labelled(folder / "labelled_notes.jsonl", tree, trim=True)
    refs = {r["patient_id"]: r["label_path"] for r in usable}
    for row in read_jsonl(folder / "unlabelled_reference.jsonl"):
        refs[row["patient_id"]] = row["path"].split(" -> ")
    return refs


def build(folder: Path, k: int, n_targets: int, synth_seed: int = 0, noise: float = 0.4):
    tree = load_tree(folder / "guideline.json")
    refs = reference_paths(folder, tree)
    targets = {
        f"{t['synth_id']}|{v}": t["target_path"].split(" -> ")
        for t in sample_targets(tree, n_targets, synth_seed)
        for v in VARIANTS
    }
    for name, p_noise in (("oracle", 0.0), ("noisy", noise)):
        for requestset, items in (("rollouts", refs), ("synth_predict", targets)):
            rows = []
            for item, path in sorted(items.items()):
                for i in range(k):
                    rng = random.Random(f"{name}|{item}|{i}")
                    got = perturb(tree, path, rng) if rng.random() < p_noise else path
                    rows.append({"request_id": f"{item}#r{i}", "text": answer(got)})
            write_jsonl(folder / "replay" / name / "guidelines" / f"{requestset}.jsonl", rows)


if __name__ == "__main__":
    build(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
