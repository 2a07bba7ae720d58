"""An exported inspect log carries no NaN: unscored items and headlines without a value are
left out of the numbers (with their reason) and every score carries the model's answer."""

from __future__ import annotations

import math

from inspect_ai.log import read_eval_log

from oncoeval.export import inspect_log
from oncoeval.export.items import Item


def test_inspect_log_has_finite_metrics_and_the_answer(tmp_path):
    items = [
        Item("a", "answer", "a", [{"role": "user", "content": "q"}], "It is fine.", "stop", "",
             scores={"pcs": 1.0}),
        Item("b", "answer", "b", [{"role": "user", "content": "q"}], "???", "stop", "",
             scores={"pcs": float("nan")}, unscored="verifier reply unreadable"),
    ]  # fmt: skip
    heads = [
        {"measure": "PCS", "value": 1.0, "ci_low": 0.2, "ci_high": 1.0, "n": 1,
         "n_unscored": 1, "note": ""},
        {"measure": "PCS (corrected)", "value": None, "ci_low": float("nan"),
         "ci_high": float("nan"), "n": 1, "n_unscored": 1, "note": "no judge validation"},
    ]  # fmt: skip
    log = inspect_log.eval_log("cancer_myth", "m", items, heads, "question", {})
    path = inspect_log.write(log, tmp_path / "m.eval")
    back = read_eval_log(str(path))
    metrics = back.results.scores[0].metrics
    assert set(metrics) == {"PCS"} and metrics["PCS"].value == 1.0
    assert math.isfinite(metrics["PCS"].params["ci_low"])
    assert back.eval.metadata["headlines_without_value"] == {
        "PCS (corrected)": "no judge validation"
    }
    samples = {s.id: s for s in back.samples}
    assert samples["a"].scores["pcs"].value == 1.0
    assert samples["a"].scores["pcs"].answer == "It is fine."
    assert not samples["b"].scores  # unscored: no NaN score, its reason in the metadata
    assert samples["b"].metadata["unscored_reason"] == "verifier reply unreadable"
