"""Algorithm 1 (category-wise label balancing) on constructed inputs."""

import random
from collections import Counter

from oncoeval.studies.cancer_myth.balance import balance_by_model, balance_categories

CATS = ["a", "b", "c"]


def _data(counts, model="g"):
    return [
        {"id": f"{model}-{cat}{i}", "category": cat, "from_model": model}
        for cat, n in counts.items()
        for i in range(n)
    ]


def test_small_categories_are_taken_whole_and_large_ones_capped():
    data = _data({"a": 2, "b": 10, "c": 5})
    out = balance_categories(
        data, select_per_model=0, select_per_category=4, categories=CATS, rng=random.Random(1)
    )
    counts = Counter(d["category"] for d in out)
    assert counts == {"a": 2, "b": 4, "c": 4}  # no fill: select_per_model <= selected


def test_fill_from_the_rest_up_to_select_per_model():
    data = _data({"a": 2, "b": 10, "c": 5})
    out = balance_categories(
        data, select_per_model=13, select_per_category=4, categories=CATS, rng=random.Random(1)
    )
    assert len(out) == 13  # 10 from the categories, 3 from the 7 put aside (6 b, 1 c)
    assert len({d["id"] for d in out}) == 13
    counts = Counter(d["category"] for d in out)
    assert counts["a"] == 2 and counts["b"] >= 4 and counts["c"] >= 4


def test_rest_smaller_than_needed_gives_everything():
    data = _data({"a": 2, "b": 6})
    out = balance_categories(
        data, select_per_model=100, select_per_category=4, categories=CATS, rng=random.Random(0)
    )
    assert len(out) == 8


def test_unlisted_categories_are_not_selected():
    data = _data({"a": 1, "zzz": 3})
    out = balance_categories(data, 10, 4, CATS, random.Random(0))
    assert [d["category"] for d in out] == ["a"]


def test_seeded_per_model_and_exact_counts_per_model():
    data = _data({"a": 6, "b": 1}, model="g1") + _data({"a": 1, "c": 9}, model="g2")
    out1 = balance_by_model(
        data, select_per_model=5, select_per_category=3, categories=CATS, seed=7
    )
    out2 = balance_by_model(
        data, select_per_model=5, select_per_category=3, categories=CATS, seed=7
    )
    assert out1 == out2
    per_model = Counter(d["from_model"] for d in out1)
    assert per_model == {"g1": 5, "g2": 5}  # g1: 3 a + 1 b + 1 fill; g2: 1 a + 3 c + 1 fill
