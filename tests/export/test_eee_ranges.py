"""Every Eval Ever records state the range each headline's value can take (its study declares
it as ``Headline.scale``): a Cancer-Myth PCS of -0.43 is inside [-1, 1], not outside [0, 1]."""

from __future__ import annotations

from oncoeval.export.eee import _range
from oncoeval.studies import STUDIES, contract


def test_pcs_runs_from_minus_one_to_one_and_shares_from_zero_to_one():
    assert _range("cancer_myth", "PCS (raw judge verdicts)") == (-1.0, 1.0)
    assert _range("cancer_myth", "PCS (corrected for judge error)") == (-1.0, 1.0)
    assert _range("cancer_myth", "PCR (raw judge verdicts)") == (0.0, 1.0)
    # CORAL's BLEU-4 is sacrebleu's score divided by 100 (coral/metrics.py): a share too.
    assert _range("coral", "BLEU-4 (published view, credits 'unknown')") == (0.0, 1.0)


def test_every_declared_scale_is_an_increasing_pair():
    for study in STUDIES:
        for headline in contract.study(study).headlines:
            low, high = headline.scale
            assert low < high, (study, headline.measure)
