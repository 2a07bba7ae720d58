"""`python -m bench exposure`, sized down: the positive control is told apart and flagged, the
negative one is not."""

import math

from bench.bench_exposure import controls, demo_items
from oncoeval.stats import BootstrapSettings


def test_memorised_half_is_told_apart_and_flagged_unseen_items_are_not():
    result = controls(demo_items(), seeds=range(4), settings=BootstrapSettings(n_resamples=200))
    completion = result["completion"]
    auc, low, high = completion["positive_auroc_first"]
    assert auc >= 0.80 and completion["positive_auroc_min"] >= 0.80
    assert not math.isnan(low) and low <= auc <= high
    assert completion["positive_share_exposed"] == 1.0
    assert completion["negative_n"] == 4 * 21
    assert completion["negative_share_flagged"] <= 0.05
    assert completion["negative_share_no_evidence"] == 1.0
    assert result["slot"]["negative_share_no_evidence"] == 1.0
