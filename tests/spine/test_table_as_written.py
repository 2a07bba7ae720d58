"""A table handed from one aggregate step to the next is the table as published: the same
frame a reader of its TSV gets, numbers rounded as written."""

from __future__ import annotations

import pandas as pd
from pandas.testing import assert_frame_equal

from oncoeval.core.io import as_written, write_table


def test_a_table_as_written_is_the_table_read_back_from_its_file(tmp_path):
    df = pd.DataFrame(
        {"patient_id": ["007", "12"], "auroc": [2 / 3, None], "n": [3, 4], "ok": [True, False]}
    )
    write_table(df, tmp_path / "t.tsv")
    for args in ({}, {"dtype": {"patient_id": str}}):
        read_back = pd.read_csv(tmp_path / "t.tsv", sep="\t", **args)
        assert_frame_equal(as_written(df, **args), read_back)
    # 6 significant digits, as the TSV has them; ids lose their zeros unless read as text
    assert as_written(df)["auroc"][0] == 0.666667
    assert as_written(df)["patient_id"].tolist() == [7, 12]
    assert as_written(df, dtype={"patient_id": str})["patient_id"].tolist() == ["007", "12"]
