"""Algorithm 1 (Appendix B.3): category-wise label balancing, seeded."""

from __future__ import annotations

import random
from collections.abc import Sequence


def balance_categories(
    data: Sequence[dict],
    select_per_model: int,
    select_per_category: int,
    categories: Sequence[str],
    rng: random.Random,
) -> list[dict]:
    """Algorithm 1 on one model's data.

    Categories with at most ``select_per_category`` entries are taken whole; larger ones give a
    random ``select_per_category`` and put the rest aside; then ``select_per_model`` minus what
    was selected is filled at random from the entries put aside (all of them when too few).
    Entries whose category is not in ``categories`` are not selected (as in the algorithm).
    Selected entries keep their input order within each step.
    """
    bins: dict[str, list[dict]] = {}
    for entry in data:
        bins.setdefault(entry["category"], []).append(entry)
    selected: list[dict] = []
    rest: list[dict] = []
    for category in categories:
        entries = bins.get(category, [])
        if len(entries) <= select_per_category:
            selected.extend(entries)
        else:
            picked = set(rng.sample(range(len(entries)), select_per_category))
            selected.extend(e for i, e in enumerate(entries) if i in picked)
            rest.extend(e for i, e in enumerate(entries) if i not in picked)
    select_from_rest = select_per_model - len(selected)
    if select_from_rest > 0 and rest:
        picked = set(rng.sample(range(len(rest)), min(select_from_rest, len(rest))))
        selected.extend(e for i, e in enumerate(rest) if i in picked)
    return selected


def balance_by_model(
    data: Sequence[dict],
    select_per_model: int,
    select_per_category: int,
    categories: Sequence[str],
    seed: int,
    model_key: str = "from_model",
) -> list[dict]:
    """Algorithm 1 per generator model (each with its own seeded generator), concatenated."""
    models: dict[str, list[dict]] = {}
    for entry in data:
        models.setdefault(entry[model_key], []).append(entry)
    out = []
    for model in sorted(models):
        rng = random.Random(f"{seed}:{model}")
        out.extend(
            balance_categories(
                models[model], select_per_model, select_per_category, categories, rng
            )
        )
    return out
