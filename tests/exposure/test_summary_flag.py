"""The summary flags an exposed model beside its headline."""

import pandas as pd

from oncoeval.exposure import audit
from oncoeval.report.summary import headline_rows


def test_an_exposed_model_is_flagged_beside_its_headline(tmp_path):
    tables = tmp_path / "cancer_myth" / "tables"
    tables.mkdir(parents=True)
    pd.DataFrame(
        {"model": ["a", "b"], "pcs": [0.5, 0.2], "n": [21, 21], "n_unscored": [0, 0]}
    ).to_csv(tables / "pcs_pcr.tsv", sep="\t", index=False)
    memorised = pd.DataFrame(
        [{"item_id": str(i), "probe": "completion", "score": 1.0, "control_score": i / 100}
         for i in range(21)],
        columns=audit.ITEM_COLUMNS,
    )  # fmt: skip
    unseen = memorised.assign(score=memorised["control_score"])
    audit.exposure_table({"a": memorised, "b": unseen}, ["completion"]).to_csv(
        tables / "exposure.tsv", sep="\t", index=False
    )
    rows = [
        r for r in headline_rows(tmp_path, ["cancer_myth"]) if r["measure"].startswith("PCS (raw")
    ]
    warnings = {r["model"]: r["warnings"] for r in rows}
    assert warnings == {"a": "exposure audit: exposed (completion)", "b": ""}
