"""The report shows where a review's labels stand: labels per stratum against the plan, the
reviewers' agreement, and the corrected rates with their intervals (review/review_status)."""

import shutil
import subprocess
import sys

import pandas as pd
import pytest
from conftest import link_workflow
from sklearn.metrics import cohen_kappa_score

from oncoeval.config.load import load_config
from oncoeval.report import catalog
from oncoeval.review import status
from oncoeval.review.__main__ import main
from oncoeval.workflow import report as report_targets
from tests.review.inputs import judged_root
from tests.review.test_import import REVIEW, _file, _reviewers

PCS_PCR = (
    "model\tpcs\tpcr\tpcs_corrected\tpcs_corrected_ci_low\tpcs_corrected_ci_high\t"
    "pcr_corrected\tpcr_corrected_ci_low\tpcr_corrected_ci_high\tn\n"
    "smollm2\t0.1\t0.5\t0.21\t0.11\t0.31\t0.46\t0.36\t0.56\t120\n"
    "other\t0.1\t0.5\tnot computed: few labels\t\t\tnot computed: few labels\t\t\t120\n"
)


@pytest.fixture
def imported(tmp_path):
    """A Cancer-Myth run with a plan of 40 answers, two reviewers' labels imported, and its
    PCS/PCR table, inside a folder the workflow is linked into."""
    root = judged_root(tmp_path)
    shutil.rmtree(root / "config")  # the repository's, linked with the rest of the workflow
    link_workflow(root)
    assert main(["page", "--root", str(root), "--labels", "40", "--seed", "3"]) == 0
    plan = pd.read_csv(root.joinpath(*REVIEW, "plan.tsv"), sep="\t", dtype={"item_id": str})
    _, a, b = _reviewers(plan)
    files = [_file(tmp_path / "a.json", plan, a, "ann"), _file(tmp_path / "b.json", plan, b, "bo")]
    assert main(["import", "--root", str(root), *files]) == 0
    (root / "results" / "cancer_myth" / "tables").mkdir()
    (root / "results" / "cancer_myth" / "tables" / "pcs_pcr.tsv").write_text(PCS_PCR)
    return root, a, b


def test_status_rows_labels_agreement_and_corrected_rates(imported, monkeypatch):
    root, a, b = imported
    monkeypatch.chdir(root)
    files = report_targets.review_status_inputs(load_config(root, []), "cancer_myth")
    assert set(files) == {"plan", "status", "agreement", "table_0"}
    table = status.status_table("cancer_myth", files)
    labels = table[table["part"] == "labels"]
    settled = pd.read_csv(root.joinpath(*REVIEW, "status.tsv"), sep="\t")
    assert list(labels["value"]) == list(settled["n_labelled"])
    assert list(labels["n_planned"]) == list(settled["n_planned"]) == [6, 10, 24]
    assert list(labels["n"]) == [18, 30, 72]
    (agree,) = table[table["part"] == "agreement"].itertuples()
    both = list(b)
    assert agree.value == pytest.approx(
        cohen_kappa_score([a[i] for i in both], [b[i] for i in both])
    )
    assert agree.ci_low < agree.value < agree.ci_high
    assert agree.row == "cohen_kappa, 2 reviewer(s)" and agree.note.startswith("75% of 40")
    corrected = table[table["part"] == "corrected"].set_index("row")
    pcr = corrected.loc["smollm2: PCR corrected for verifier error"]
    assert (pcr["value"], pcr["ci_low"], pcr["ci_high"]) == (0.46, 0.36, 0.56)
    # a cell that gives a reason instead of a value keeps it as the row's note
    other = corrected.loc["other: PCR corrected for verifier error"]
    assert pd.isna(other["value"]) and other["note"] == "not computed: few labels"


def test_the_report_shows_the_status_once_a_plan_is_drawn(imported, monkeypatch, tmp_path):
    root, _, _ = imported
    config = load_config(root, [])
    page = "results/report/cancer_myth/review/review_status.html"
    monkeypatch.chdir(tmp_path)  # no plan here
    assert page not in report_targets.report_targets(config, [])
    monkeypatch.chdir(root)
    assert status.targets(config) == ["results/cancer_myth/review/review_status.tsv"]
    assert page in report_targets.report_targets(config, [])
    # The workflow's rule writes it (the study's tables taken as they are)
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "1",
         "results/cancer_myth/review/review_status.tsv", "--allowed-rules", "review_status"],
        cwd=root, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[:3000]
    entry = catalog.entry_for("results/cancer_myth/review/review_status.tsv")
    assert entry.subcategory == "judge validation"
    caption = entry.caption(root=root)
    assert not any(mark in caption for mark in catalog.FALLBACK_MARKS)
    assert "labels settled per stratum" in caption
    assert "Intervals (95%): agreement: percentile bootstrap" in caption
