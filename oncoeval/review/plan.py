"""Which answers a clinician labels: a stratified sample with known inclusion probabilities.

The population is every answer the judge gave a readable verdict on (all evaluated models,
their answers pooled). Strata are the judge's verdicts. A stratum h of N_h answers gets n_h
labels by Neyman allocation, n_h proportional to N_h * S_h, where S_h = sqrt(p_h (1 - p_h)) and
p_h is the share of truly positive answers (Cancer-Myth: human score 1, the PCR) among those the
judge put in h: the allocation that minimises the variance of the stratified estimate of the
positive share, ``sum_h W_h * (positives among h's labels / n_h)`` (W_h = N_h / N). That
estimate is what the judge correction computes from the design-weighted confusion matrix
(oncoeval.judges.correction), so the plan minimises the width of the corrected PCR.

p_h comes from the human labels already collected (the judge's verdicts on the validation
answers), shrunk toward a documented prior: a Beta distribution worth ``PRIOR_STRENGTH``
labels, with mean ``PRIOR_POSITIVE`` for the positive verdict and ``PRIOR_NEGATIVE`` for the
others (a judge that is right four times in five). Without labels the prior alone decides.

Within a stratum the answers are drawn without replacement with a fixed seed; each drawn
answer's inclusion probability is n_h / N_h. Its expected half-width at n labels is
``z * sqrt(sum_h W_h^2 S_h^2 / n_h * (1 - n_h / N_h))`` (the labels' part of the corrected
rate's interval; the evaluated answers' own sampling adds to it), written beside the half-width
a simple random sample of the same size would give.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

from ..stats.bootstrap import BootstrapSettings

PRIOR_STRENGTH = 5.0
PRIOR_POSITIVE = 0.8
PRIOR_NEGATIVE = 0.2

PLAN_COLUMNS = [
    "item_id", "stratum", "n_stratum", "n_planned", "inclusion_probability", "answer_sha256",
    "order",
]  # fmt: skip


@dataclass(frozen=True)
class PlanSettings:
    """The plan's size and target; its seed and interval level are the run's (``bootstrap``)."""

    seed: int
    ci: float
    n_labels: int = 60
    target_half_width: float = 0.05
    min_per_stratum: int = 2

    @classmethod
    def from_config(cls, config: dict, n_labels: int = 60, seed: int | None = None):
        boot = BootstrapSettings.from_config(config)
        return cls(seed=boot.seed if seed is None else seed, ci=boot.ci, n_labels=n_labels)


def answer_hash(text: str) -> str:
    """What a label file names the labelled answer by: a changed answer is a different item."""
    return hashlib.sha256((text or "").encode("utf-8")).hexdigest()[:16]


def stratum_positive_shares(strata, positive_stratum, labelled=None) -> dict:
    """p_h per stratum: the labelled share of positives among the judge's verdict h, shrunk to
    the prior. ``labelled``: (judge verdict, human label is positive) pairs, or None."""
    shares = {}
    pairs = [] if labelled is None else list(labelled)
    for h in strata:
        mean = PRIOR_POSITIVE if h == positive_stratum else PRIOR_NEGATIVE
        hits = [bool(pos) for verdict, pos in pairs if verdict == h]
        shares[h] = (PRIOR_STRENGTH * mean + sum(hits)) / (PRIOR_STRENGTH + len(hits))
    return shares


def neyman_allocation(sizes: dict, sds: dict, total: int, minimum: int = 2) -> dict:
    """n_h proportional to N_h * S_h, integers summing to ``total`` (largest remainders), each at
    least ``minimum`` and at most N_h (a stratum pushed past a bound is fixed there and the
    rest is shared again)."""
    total = min(total, sum(sizes.values()))
    fixed: dict = {}
    ideal: dict = {}
    while len(fixed) < len(sizes):
        free = [h for h in sizes if h not in fixed]
        left = total - sum(fixed.values())
        weight = {h: sizes[h] * max(sds[h], 1e-6) for h in free}
        ideal = {h: left * weight[h] / sum(weight.values()) for h in free}
        over = {h: sizes[h] for h in free if ideal[h] > sizes[h]}
        under = {h: min(minimum, sizes[h]) for h in free if ideal[h] < min(minimum, sizes[h])}
        if not (over or under):
            break
        fixed |= over or under
    n = {h: fixed.get(h, int(np.floor(ideal.get(h, 0)))) for h in sizes}
    for h in sorted(ideal, key=lambda h: ideal[h] - np.floor(ideal[h]), reverse=True):
        if h not in fixed and sum(n.values()) < total and n[h] < sizes[h]:
            n[h] += 1
    return n


def half_width(sizes: dict, sds: dict, n: dict, ci: float) -> float:
    """Expected half-width of the stratified positive share with n_h labels per stratum."""
    big_n = sum(sizes.values())
    var = sum(
        (sizes[h] / big_n) ** 2 * sds[h] ** 2 / n[h] * (1 - n[h] / sizes[h])
        for h in sizes
        if n[h] > 0
    )
    return float(norm.ppf(0.5 + ci / 2) * np.sqrt(var))


def srs_half_width(sizes: dict, shares: dict, n: int, ci: float) -> float:
    """Expected half-width of the positive share from a simple random sample of n answers."""
    big_n = sum(sizes.values())
    p = sum(sizes[h] * shares[h] for h in sizes) / big_n
    return float(norm.ppf(0.5 + ci / 2) * np.sqrt(p * (1 - p) / n * (1 - n / big_n)))


def half_width_table(sizes: dict, shares: dict, settings: PlanSettings) -> pd.DataFrame:
    """labels -> expected half-width of the corrected positive share, planned and simple random."""
    sds = {h: np.sqrt(p * (1 - p)) for h, p in shares.items()}
    big_n = sum(sizes.values())
    floor = settings.min_per_stratum * len(sizes)
    grid = sorted({*range(floor, big_n + 1, 10), big_n, min(settings.n_labels, big_n)} - {0})
    rows = []
    for labels in grid:
        if labels < floor:
            continue
        n = neyman_allocation(sizes, sds, labels, settings.min_per_stratum)
        rows.append(
            {
                "labels": labels,
                **{f"n_{h}": n[h] for h in sizes},
                "half_width_planned": half_width(sizes, sds, n, settings.ci),
                "half_width_random": srs_half_width(sizes, shares, labels, settings.ci),
            }
        )
    return pd.DataFrame(rows)


def labels_for(table: pd.DataFrame, target: float, column: str = "half_width_planned"):
    """The fewest labels in ``table`` whose expected half-width is at most ``target`` (None)."""
    hit = table[table[column] <= target]
    return None if hit.empty else int(hit["labels"].min())


def draw(population: pd.DataFrame, shares: dict, settings: PlanSettings) -> pd.DataFrame:
    """The plan: ``population`` has item_id, stratum and answer_sha256 per answer; returns the
    drawn rows with their inclusion probability and the (shuffled) order the page shows them in.
    """
    pop = population.sort_values("item_id").reset_index(drop=True)
    sizes = pop.groupby("stratum").size().to_dict()
    sds = {h: np.sqrt(shares[h] * (1 - shares[h])) for h in sizes}
    n = neyman_allocation(sizes, sds, settings.n_labels, settings.min_per_stratum)
    rng = np.random.default_rng(settings.seed)
    drawn = []
    for h in sorted(sizes):
        members = pop[pop["stratum"] == h]
        picked = members.iloc[np.sort(rng.choice(len(members), n[h], replace=False))]
        drawn.append(
            picked.assign(n_stratum=sizes[h], n_planned=n[h], inclusion_probability=n[h] / sizes[h])
        )
    plan = pd.concat(drawn, ignore_index=True)
    # The page's order mixes the strata, so a reviewer cannot tell the verdict from the position
    # and stopping early leaves a random part of every stratum.
    plan["order"] = rng.permutation(len(plan))
    return plan.sort_values("order").reset_index(drop=True)
