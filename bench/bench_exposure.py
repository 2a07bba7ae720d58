"""Exposure audit (issue #38) on a positive and a negative control, on the demo's Cancer-Myth
questions (oncoeval.exposure, the functions the workflow's rules run).

- positive: a replay model that has half-memorised a known, seeded half of the items. Asked for
  an item's rest (completion) it recalls a random 40-90% of it from the start, with one word in
  ten replaced by another item's word; asked for a masked word (slot) it recalls it eight times
  in ten. On the other items and on every control it answers with a plausible text of the same
  kind, recalled the same way from another item (its rest, its masked word). The audit must
  tell the halves apart item by item (AUROC of the item score, memorised against unseen, >=
  0.80, with Newcombe's score interval, which keeps its width at an AUROC of 1) and flag the
  model "exposed".
- negative: the same replay with nothing memorised: at most 5% of items flagged over all
  draws, verdict "no evidence".
- likelihood, negative only: the stock embedded model (SmolLM2-135M-Instruct, which cannot have
  seen the synthetic questions) scores each question and its spliced controls (Min-K% Prob),
  one draw of controls per seed. No model known to have memorised the items returns
  log-probabilities here, so the probe has no positive control.

Each of ``SEEDS`` draws its own memorised half, masked words, controls and answers.
"""

from __future__ import annotations

import json
import math
import os
import random
from pathlib import Path

from scipy import optimize, stats
from sklearn.metrics import roc_auc_score

from oncoeval.core.records import Response
from oncoeval.core.source import source_file
from oncoeval.exposure import audit
from oncoeval.exposure.probes import ProbeSettings, build_probes, read_template, word_pool

SEEDS = range(50)
LIKELIHOOD_SEEDS = range(10)
REPLAYED = ("completion", "slot")
TEMPLATES = source_file("config/prompts/exposure")
QUESTIONS = source_file("resources/demo/cancer_myth/questions.json")
RECALL = (0.4, 0.9)  # share of an item's rest a memorising model reproduces, drawn per answer
NOISE = 0.1  # share of its words replaced by another item's word
SLOT_RECALL = 0.8  # chance that it names a masked word it has memorised


def demo_items(path=QUESTIONS) -> list[dict]:
    rows = json.loads(Path(path).read_text(encoding="utf-8"))
    return [{"item_id": str(i), "text": r["example_question"]} for i, r in enumerate(rows)]


def recalled(probe: str, truth: str, other: str, rng: random.Random, pool: list[str]) -> str:
    """A memorising model's answer: a prefix of the true rest with word noise, or the masked
    word (else ``other``, another item's)."""
    if probe == "slot":
        return truth if rng.random() < SLOT_RECALL else other
    words = truth.split()
    keep = max(1, math.ceil(rng.uniform(*RECALL) * len(words)))
    return " ".join(rng.choice(pool) if rng.random() < NOISE else w for w in words[:keep])


def replay_answers(requests, memorised: set[str], rng: random.Random, pool) -> dict:
    """Recalled answers for a memorised item; for every other request (item or control) the
    same recall of another request's truth of its kind: plausible text, not its own."""
    out = {}
    for control in (False, True):
        group = [r for r in requests if r.meta["control"] is control]
        for i, req in enumerate(group):
            other = group[rng.choice([k for k in range(len(group)) if k != i])].meta["truth"]
            own = not control and req.meta["item_id"] in memorised
            probe = req.meta["probe"]
            text = recalled(probe, req.meta["truth"] if own else other, other, rng, pool)
            out[req.request_id] = Response(req.request_id, "replay", text)
    return out


def audit_once(items, probe: str, seed: int, memorised_share: float):
    """One draw: the memorised ids, the item rows and the table row of one probe."""
    rng = random.Random(f"bench|{seed}|{probe}")
    ids = [it["item_id"] for it in items]
    memorised = set(rng.sample(ids, round(memorised_share * len(ids))))
    settings = ProbeSettings("Cancer-Myth", "patient question", seed, None, 64)
    requests, _ = build_probes(items, probe, read_template(TEMPLATES, probe), settings)
    pool = word_pool(it["text"] for it in items)
    rows = audit.item_rows(probe, requests, replay_answers(requests, memorised, rng, pool))
    return memorised, rows, audit.summarise("replay", probe, rows)


def auroc_ci(auc: float, n1: int, n0: int, level: float = 0.95) -> tuple[float, float]:
    """Newcombe's (2006, Stat Med 25:559, method 5) score interval of an AUROC: the values of
    theta whose distance from ``auc`` is within z standard errors, the Hanley-McNeil variance
    taken at theta (with n* = (n1 + n0) / 2), so that it has width at an AUROC of 0 or 1."""
    z = stats.norm.ppf(0.5 + level / 2)
    m = (n1 + n0) / 2 - 1

    def gap(theta: float) -> float:
        var = theta * (1 - theta) * (1 + m * (1 - theta) / (2 - theta) + m * theta / (1 + theta))
        return (auc - theta) ** 2 - z**2 * var / (n1 * n0)

    # At an AUROC of 1 (or 0) theta = auc is a root too (no variance there): bracket past it.
    low = optimize.brentq(gap, 0.0, min(auc, 1 - 1e-12)) if auc > 0 else 0.0
    high = optimize.brentq(gap, max(auc, 1e-12), 1.0) if auc < 1 else 1.0
    return float(low), float(high)


def auroc_with_ci(labels, scores) -> tuple[float, float, float]:
    """(AUROC, ci_low, ci_high): scikit-learn's AUROC of the item scores, memorised (1) against
    unseen (0), with Newcombe's interval."""
    labels = list(labels)
    auc = float(roc_auc_score(labels, scores))
    return (auc, *auroc_ci(auc, sum(labels), len(labels) - sum(labels)))


def controls(items, seeds=SEEDS) -> dict:
    """Per replayed probe: the positive control's AUROCs (first draw with its interval, the
    lowest over draws) and verdicts; the negative control's share flagged over every draw and
    verdicts."""
    out = {}
    for probe in REPLAYED:
        pos_auc, pos_verdicts, first = [], [], None
        flagged = n = 0
        neg_verdicts = []
        for seed in seeds:
            memorised, rows, row = audit_once(items, probe, seed, 0.5)
            labels = rows["item_id"].isin(memorised).astype(int)
            auc = auroc_with_ci(labels, rows["score"])
            first = first or auc
            pos_auc.append(auc[0])
            pos_verdicts.append(row["verdict"])
            _, _, neg = audit_once(items, probe, seed, 0.0)
            flagged, n = flagged + neg["flagged"], n + neg["n"]
            neg_verdicts.append(neg["verdict"])
        out[probe] = {
            "n_items": len(items),
            "draws": len(list(seeds)),
            "positive_auroc_first": first,
            "positive_auroc_min": min(pos_auc),
            "positive_auroc_mean": sum(pos_auc) / len(pos_auc),
            "positive_share_exposed": pos_verdicts.count("exposed") / len(pos_verdicts),
            **_negative(flagged, n, neg_verdicts),
        }
    return out


def _negative(flagged: int, n: int, verdicts: list[str]) -> dict:
    return {
        "negative_flagged": flagged,
        "negative_n": n,
        "negative_share_flagged": flagged / n,
        "negative_share_ci": audit.wilson(flagged, n),
        "negative_share_no_evidence": verdicts.count("no evidence") / len(verdicts),
    }


def likelihood_negative(items, backend, seeds=LIKELIHOOD_SEEDS) -> dict:
    """The likelihood probe on ``backend`` (answering ``text_logprobs`` requests), one draw of
    spliced controls per seed; each distinct text is scored once."""
    template = read_template(TEMPLATES, "likelihood")
    answers: dict[str, Response] = {}
    flagged = n = 0
    verdicts, thresholds = [], []
    for seed in seeds:
        settings = ProbeSettings("Cancer-Myth", "patient question", seed, None, 1)
        requests, _ = build_probes(items, "likelihood", template, settings)
        todo = {r.messages[0]["content"]: r for r in requests}
        todo = [r for text, r in todo.items() if text not in answers]
        by_id = {r.request_id: r.messages[0]["content"] for r in todo}
        for resp in backend.generate(todo):
            answers[by_id[resp.request_id]] = resp
        replies = {r.request_id: answers[r.messages[0]["content"]] for r in requests}
        row = audit.summarise(
            "smollm2", "likelihood", audit.item_rows("likelihood", requests, replies)
        )
        flagged, n = flagged + row["flagged"], n + row["n"]
        verdicts.append(row["verdict"])
        thresholds.append(row["control_p95"])
    return {"n_items": len(items), "draws": len(list(seeds)), **_negative(flagged, n, verdicts)}


def embedded_backend():
    from oncoeval.backends.hf import Backend

    os.environ.setdefault("ONCOEVAL_MODEL_STORE", str(source_file("cache/models")))
    cfg = {"id": "smollm2", "backend": "hf", "path": "embedded:smollm2-135m-instruct"}
    return Backend({**cfg, "dtype": "float32"}, threads=2)


def run(out_dir: Path) -> dict:
    items = demo_items()
    result = controls(items)
    backend = embedded_backend()
    likelihood = likelihood_negative(items, backend)
    backend.close()
    summary = [
        f"Demo Cancer-Myth questions: {len(items)} items, {len(SEEDS)} draws (memorised half, "
        "masks, controls and answers redrawn each time); replayed answers that recall "
        f"{RECALL[0]:.0%}-{RECALL[1]:.0%} of a memorised item's rest with {NOISE:.0%} word "
        f"noise, or its masked word {SLOT_RECALL:.0%} of the time.",
        "",
        "| probe | positive AUROC (draw 0, 95% Newcombe CI) | mean / lowest AUROC | positive "
        "flagged exposed | negative share flagged (95% Wilson CI) | negative 'no evidence' |",
        "|---|---|---|---|---|---|",
    ]
    for probe, r in result.items():
        auc, lo, hi = r["positive_auroc_first"]
        summary.append(
            f"| {probe} | {auc:.3f} ({lo:.3f}-{hi:.3f}) | {r['positive_auroc_mean']:.3f} / "
            f"{r['positive_auroc_min']:.3f} | {r['positive_share_exposed']:.0%} of draws | "
            f"{_share(r)} | {r['negative_share_no_evidence']:.0%} of draws |"
        )
    summary.append(
        f"| likelihood (SmolLM2, {likelihood['draws']} draws of controls) | not measured | "
        f"not measured | not measured | {_share(likelihood)} | "
        f"{likelihood['negative_share_no_evidence']:.0%} of draws |"
    )
    return {"controls": result, "likelihood": likelihood, "summary": summary}


def _share(r: dict) -> str:
    lo, hi = r["negative_share_ci"]
    return (
        f"{r['negative_share_flagged']:.3f} ({r['negative_flagged']}/{r['negative_n']}; "
        f"{lo:.3f}-{hi:.3f})"
    )
