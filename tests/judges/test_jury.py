"""Jury verdicts and Fleiss' kappa, worked by hand."""

import numpy as np
import pytest

from oncoeval.judges.jury import TIE, combine, fleiss_kappa


def test_majority_mean_and_tie():
    assert combine([1, 1, -1]).value == 1
    assert combine([1, None, 1]).value == 1  # an unreadable juror does not vote
    tied = combine([1, -1, None])
    assert tied.value is None and tied.reason == TIE
    assert combine([1, 0, -1]).reason == TIE
    assert combine([1, 0, 0], how="mean").value == pytest.approx(1 / 3)
    nobody = combine([None, None], problems=["no score", "verifier error: 500"])
    assert nobody.value is None and "no score; verifier error: 500" in nobody.reason
    assert combine([0, 0, 0]).unanimous and not combine([0, 0, None]).unanimous
    with pytest.raises(ValueError, match="unknown jury combination"):
        combine([1], how="median")


def test_fleiss_kappa_by_hand():
    # 3 jurors, 4 items, classes (-1, 1): votes per item [3,0], [0,3], [2,1], [1,2].
    # P_i = (sum n_ij^2 - 3) / 6 = 1, 1, 1/3, 1/3 -> P_bar = 2/3; p_j = (6/12, 6/12) -> P_e = 1/2
    # kappa = (2/3 - 1/2) / (1 - 1/2) = 1/3. The item with an unreadable vote is left out.
    votes = [(-1, -1, -1), (1, 1, 1), (-1, -1, 1), (1, 1, -1), (1, None, 1)]
    kappa, used = fleiss_kappa(votes, (-1, 1))
    assert used == 4
    assert kappa == pytest.approx(1 / 3)
    assert np.isnan(fleiss_kappa([(1, 1), (1, 1)], (-1, 1))[0])
