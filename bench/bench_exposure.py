"""Exposure audit (issue #38) on a positive and a negative control, on the demo's Cancer-Myth
questions (oncoeval.exposure, the functions the workflow's rules run).

- positive: a replay model that has "memorised" a known, seeded half of the items: its probe
  answers are those items' true rest (completion) or masked word (slot); on the other items and
  on every control it answers with another item's truth of the same kind (plausible text, not
  the right one). The audit must tell the halves apart item by item (AUROC of the item score,
  memorised against unseen, >= 0.80, with a percentile bootstrap interval) and flag the model
  "exposed".
- negative: the same replay with nothing memorised (every answer another item's truth): at most
  5% of items flagged over all draws, verdict "no evidence".

Each of ``SEEDS`` draws its own memorised half, masked words, controls and answers. The stock
embedded model is not run here (replayed answers only): a CPU generation of every probe is
minutes, the replay seconds.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from oncoeval.exposure import audit
from oncoeval.exposure.probes import PROBES, ProbeSettings, build_probes, read_template
from oncoeval.records import Response
from oncoeval.source import source_file
from oncoeval.stats import BootstrapSettings, auroc_rows, bootstrap_stat_ci

SEEDS = range(50)
TEMPLATES = source_file("config/prompts/exposure")
QUESTIONS = source_file("resources/demo/cancer_myth/questions.json")


def demo_items(path=QUESTIONS) -> list[dict]:
    rows = json.loads(Path(path).read_text(encoding="utf-8"))
    return [{"item_id": str(i), "text": r["example_question"]} for i, r in enumerate(rows)]


def replay_answers(requests, memorised: set[str], rng: random.Random) -> dict[str, Response]:
    """Own truth for a memorised item; for every other request another request's truth of its
    kind (item or control), drawn with ``rng``."""
    out = {}
    for control in (False, True):
        group = [r for r in requests if r.meta["control"] is control]
        for i, req in enumerate(group):
            if not control and req.meta["item_id"] in memorised:
                text = req.meta["truth"]
            else:
                j = rng.choice([k for k in range(len(group)) if k != i])
                text = group[j].meta["truth"]
            out[req.request_id] = Response(req.request_id, "replay", text)
    return out


def audit_once(items, probe: str, seed: int, memorised_share: float):
    """One draw: the memorised ids, the item rows and the table row of one probe."""
    rng = random.Random(f"bench|{seed}|{probe}")
    ids = [it["item_id"] for it in items]
    memorised = set(rng.sample(ids, round(memorised_share * len(ids))))
    settings = ProbeSettings("Cancer-Myth", "patient question", seed, None, 64)
    requests, _ = build_probes(items, probe, read_template(TEMPLATES, probe), settings)
    rows = audit.item_rows(probe, requests, replay_answers(requests, memorised, rng))
    return memorised, rows, audit.summarise("replay", probe, rows)


def auroc_with_ci(labels, scores, settings: BootstrapSettings):
    """(AUROC, ci_low, ci_high): scikit-learn's AUROC of the item scores, memorised (1) against
    unseen (0), with the project's percentile bootstrap over items."""
    y, p = np.asarray(labels, int), np.asarray(scores, float)
    low, high = bootstrap_stat_ci(lambda idx: auroc_rows(y, p, idx), len(y), settings)
    return float(roc_auc_score(y, p)), low, high


def controls(items, seeds=SEEDS, settings: BootstrapSettings | None = None) -> dict:
    """Per probe: the positive control's AUROCs (first draw with its interval, the lowest over
    draws) and verdicts; the negative control's share flagged over every draw and verdicts."""
    settings = settings or BootstrapSettings()
    out = {}
    for probe in PROBES:
        pos_auc, pos_verdicts, first = [], [], None
        flagged = n = 0
        neg_verdicts = []
        for seed in seeds:
            memorised, rows, row = audit_once(items, probe, seed, 0.5)
            labels = rows["item_id"].isin(memorised).astype(int)
            if first is None:
                first = auroc_with_ci(labels, rows["score"], settings)
            pos_auc.append(float(roc_auc_score(labels, rows["score"])))
            pos_verdicts.append(row["verdict"])
            _, _, neg = audit_once(items, probe, seed, 0.0)
            flagged, n = flagged + neg["flagged"], n + neg["n"]
            neg_verdicts.append(neg["verdict"])
        low, high = audit.wilson(flagged, n)
        out[probe] = {
            "n_items": len(items),
            "draws": len(list(seeds)),
            "positive_auroc_first": first,
            "positive_auroc_min": min(pos_auc),
            "positive_share_exposed": pos_verdicts.count("exposed") / len(pos_verdicts),
            "negative_flagged": flagged,
            "negative_n": n,
            "negative_share_flagged": flagged / n,
            "negative_share_ci": (low, high),
            "negative_share_no_evidence": neg_verdicts.count("no evidence") / len(neg_verdicts),
        }
    return out


def run(out_dir: Path) -> dict:
    items = demo_items()
    result = controls(items)
    summary = [
        f"Demo Cancer-Myth questions: {len(items)} items, {len(SEEDS)} draws (memorised half, "
        "masks, controls and answers redrawn each time); replayed answers.",
        "",
        "| probe | positive AUROC (draw 0, 95% CI) | lowest AUROC | positive flagged exposed "
        "| negative share flagged (95% Wilson CI) | negative 'no evidence' |",
        "|---|---|---|---|---|---|",
    ]
    for probe, r in result.items():
        auc, lo, hi = r["positive_auroc_first"]
        nlo, nhi = r["negative_share_ci"]
        summary.append(
            f"| {probe} | {auc:.3f} ({lo:.3f}-{hi:.3f}) | {r['positive_auroc_min']:.3f} "
            f"| {r['positive_share_exposed']:.0%} of draws "
            f"| {r['negative_share_flagged']:.3f} ({r['negative_flagged']}/{r['negative_n']}; "
            f"{nlo:.3f}-{nhi:.3f}) | {r['negative_share_no_evidence']:.0%} of draws |"
        )
    return {"controls": result, "summary": summary}
