"""Importing reviewers' label files: agreement against scikit-learn, disagreements, refusals,
and the imported labels weighting the Cancer-Myth correction (checked by hand)."""

import json
import shutil

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from oncoeval.core.records import Response, write_responses
from oncoeval.judges.correction import DEFAULT_CORRECTION
from oncoeval.review.__main__ import main
from oncoeval.review.page import LABEL_FORMAT
from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.studies.cancer_myth import aggregate, metrics
from oncoeval.studies.cancer_myth.requests import load_human_scores
from tests.review.inputs import REPO, VERDICTS, judged_root

REVIEW = ("results", "cancer_myth", "review")


@pytest.fixture
def planned(tmp_path):
    root = judged_root(tmp_path)
    assert main(["page", "--root", str(root), "--labels", "40", "--seed", "3"]) == 0
    plan = pd.read_csv(root.joinpath(*REVIEW, "plan.tsv"), sep="\t", dtype={"item_id": str})
    return root, plan


def _truth(stratum: int, k: int) -> int:
    # The "true" label: the judge's verdict 1 is right on 3 of 4 answers, 0 and -1 on 2 of 3.
    if stratum == 1:
        return 1 if k % 4 else 0
    return stratum if k % 3 else 1


def _file(path, plan, labels: dict, reviewer: str, study="cancer_myth", mode="label"):
    hashes = dict(zip(plan["item_id"], plan["answer_sha256"], strict=True))
    doc = {
        "format": LABEL_FORMAT, "study": study, "plan_id": "x", "mode": mode,
        "reviewer": reviewer,
        "labels": [
            {"item_id": i, "label": v, "note": f"{reviewer} on {i}", "answer_sha256": hashes.get(i, "0")}
            for i, v in labels.items()
        ],
    }  # fmt: skip
    path.write_text(json.dumps(doc))
    return str(path)


def _reviewers(plan):
    truth = {
        i: _truth(s, k)
        for k, (i, s) in enumerate(zip(plan["item_id"], plan["stratum"], strict=False))
    }
    a = dict(truth)
    # B labels the first 30 of the page's order and differs from A on every fifth.
    b = {i: (truth[i] if k % 5 else (truth[i] + 2) % 3 - 1) for k, i in enumerate(list(truth)[:30])}
    return truth, a, b


def test_two_reviewers_kappa_disagreements_and_human_labels(planned, tmp_path, capsys):
    root, plan = planned
    truth, a, b = _reviewers(plan)
    files = [_file(tmp_path / "a.json", plan, a, "ann"), _file(tmp_path / "b.json", plan, b, "bo")]
    assert main(["import", "--root", str(root), *files]) == 0
    where = root.joinpath(*REVIEW)
    agree = pd.read_csv(where / "agreement.tsv", sep="\t").iloc[0]
    both = list(b)
    expected = cohen_kappa_score([a[i] for i in both], [b[i] for i in both])
    assert agree["measure"] == "cohen_kappa"
    assert agree["value"] == pytest.approx(expected)
    assert agree["ci_low"] < expected < agree["ci_high"]
    assert agree["items_double_labelled"] == 30 and agree["share_double_labelled"] == 0.75
    differ = sorted(i for i in both if a[i] != b[i])
    listed = pd.read_csv(where / "disagreements.tsv", sep="\t", dtype={"item_id": str})
    assert sorted(listed["item_id"]) == differ and len(differ) == 6
    assert set(listed.columns) >= {"label_ann", "label_bo", "note_ann", "note_bo"}
    # The human labels: every item but the unsettled disagreements, with the labelled share
    # of its stratum as inclusion probability; the study's own loader reads them.
    rows = load_human_scores(where / "human_scores.json")
    assert sorted(r["id"] for r in rows) == sorted(set(a) - set(differ))
    strata = plan.set_index("item_id")
    for r in rows:
        h = strata.loc[r["id"], "stratum"]
        m = sum(1 for x in rows if strata.loc[x["id"], "stratum"] == h)
        assert r["inclusion_probability"] == pytest.approx(m / strata.loc[r["id"], "n_stratum"])
        assert r["human_score"] == a[r["id"]]
    # An adjudicator's file settles the disagreements: they join the labels.
    settled = _file(
        tmp_path / "c.json", plan, {i: truth[i] for i in differ}, "cy", mode="adjudicate"
    )
    assert main(["import", "--root", str(root), *files, settled]) == 0
    assert len(load_human_scores(where / "human_scores.json")) == 40


def test_three_reviewers_krippendorff_alpha(planned, tmp_path):
    root, plan = planned
    truth, a, b = _reviewers(plan)
    c = {i: v for k, (i, v) in enumerate(truth.items()) if k % 2}
    files = [
        _file(tmp_path / f"{n}.json", plan, labels, n)
        for n, labels in (("ann", a), ("bo", b), ("cy", c))
    ]
    assert main(["import", "--root", str(root), *files]) == 0
    agree = pd.read_csv(root.joinpath(*REVIEW, "agreement.tsv"), sep="\t").iloc[0]
    data = np.array([[labels.get(i, np.nan) for i in truth] for labels in (a, b, c)], float)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert agree["measure"] == "krippendorff_alpha"
    assert agree["value"] == pytest.approx(expected)
    assert 0 < expected < 1


@pytest.mark.parametrize(
    "change, message",
    [
        ("unknown", "item nope: not in the review plan"),
        ("study", "labels of study 'coral'"),
        ("answer", "labelled a different answer than the plan's"),
        ("not_a_list", "labels: expected a list of labels"),
    ],
)
def test_labels_that_do_not_match_the_plan_are_refused(planned, tmp_path, capsys, change, message):
    root, plan = planned
    _, a, _ = _reviewers(plan)
    path = tmp_path / "a.json"
    _file(path, plan, a | ({"nope": 1} if change == "unknown" else {}), "ann",
          study="coral" if change == "study" else "cancer_myth")  # fmt: skip
    if change == "not_a_list":
        doc = json.loads(path.read_text())
        doc["labels"] = {x["item_id"]: x["label"] for x in doc["labels"]}
        path.write_text(json.dumps(doc))
    if change == "answer":
        doc = json.loads(path.read_text())
        doc["labels"][3]["answer_sha256"] = "feedfeedfeedfeed"
        path.write_text(json.dumps(doc))
        message = f"item {doc['labels'][3]['item_id']}: {message}"
    assert main(["import", "--root", str(root), str(path)]) == 1
    err = capsys.readouterr().err
    assert str(path) in err and message in err
    assert not root.joinpath(*REVIEW, "human_scores.json").exists()


def test_imported_labels_weight_the_corrected_rate_by_hand(planned, tmp_path):
    root, plan = planned
    truth, a, _ = _reviewers(plan)
    # The config's own human scores (the demo's hand-picked answers) are carried over.
    demo = root / "resources" / "demo" / "cancer_myth" / "human_scores.json"
    demo.parent.mkdir(parents=True)
    shutil.copy(REPO / "resources" / "demo" / "cancer_myth" / "human_scores.json", demo)
    assert main(["import", "--root", str(root), _file(tmp_path / "a.json", plan, a, "ann")]) == 0
    human = root.joinpath(*REVIEW, "human_scores.json")
    rows = load_human_scores(human)
    carried = [r for r in rows if "inclusion_probability" not in r]
    assert [r["id"] for r in carried] == [r["id"] for r in load_human_scores(demo)]
    # The verifier's verdicts on the validation answers: its plan-time verdicts (the cache
    # answers the same request alike).
    stratum = dict(zip(plan["item_id"], plan["stratum"], strict=True))
    first = tmp_path / "first.jsonl"
    write_responses(
        first,
        [
            Response(
                r["id"],
                "smollm2",
                json.dumps({"Reason": "r", "Sharpness": int(stratum.get(r["id"], 1))}),
            )
            for r in rows
        ],
    )
    (tmp_path / "retry.jsonl").write_text("")
    pairs = tmp_path / "pairs.tsv"
    settings = BootstrapSettings(n_resamples=200)
    out = {k: tmp_path / f"{k}.x" for k in ("judge_agreement", "judge_confusion")}
    inputs = {"human": human, "first": first, "retry": tmp_path / "retry.jsonl"}
    out |= {"judge_agreement_md": tmp_path / "m.x", "judge_confusion_md": tmp_path / "cm.x"}
    aggregate.judge_validation(inputs, out | {"verifier_pairs": pairs}, settings, "smollm2")
    # Only the planned answers correct the rates; the carried ones stay in the agreement tables.
    assert len(pd.read_csv(pairs, sep="\t")) == 40 + len(carried)
    validation = aggregate.read_validation_pairs(pairs)
    assert validation.weights is not None and len(validation[0]) == 40
    cells = metrics.corrected_pcs_pcr(
        np.array(VERDICTS, float), validation, settings, DEFAULT_CORRECTION
    )
    # By hand: the stratified share of human label 1, sum_h N_h/N * (label-1 share in h).
    expected = 0.0
    for h, n_h in {-1: 18, 0: 30, 1: 72}.items():
        labels = [truth[i] for i in truth if stratum[i] == h]
        expected += n_h / 120 * np.mean(np.array(labels) == 1)
    assert cells["pcr_corrected"] == pytest.approx(expected)


def test_the_checklist_reports_the_reviewers_and_their_agreement(planned, tmp_path):
    from oncoeval.config.load import load_config
    from oncoeval.export import checklist

    root, plan = planned
    _, a, b = _reviewers(plan)
    files = [_file(tmp_path / "a.json", plan, a, "ann"), _file(tmp_path / "b.json", plan, b, "bo")]
    assert main(["import", "--root", str(root), *files]) == 0
    facts = checklist.RunFacts(root, load_config(root, []), {})
    both = list(b)
    kappa = cohen_kappa_score([a[i] for i in both], [b[i] for i in both])
    (line,) = facts.review_agreement()
    assert line.startswith("cancer_myth: 2 reviewer(s), 40 answers labelled, 75% by two or more")
    assert f"cohen_kappa {kappa:.2f}" in line
    tripod_7d = next(e for e in checklist.entries(facts) if e.item == "7d")
    assert line in tripod_7d.answer and tripod_7d.status == checklist.PARTLY
    # 8b: how many annotators, the share labelled by more than one, their agreement
    tripod_8b = next(e for e in checklist.entries(facts) if e.item == "8b")
    assert line in tripod_8b.answer and tripod_8b.status == checklist.PARTLY


def test_the_adjudication_page_shows_only_the_disputed_items_with_both_labels(planned, tmp_path):
    import re

    root, plan = planned
    _, a, b = _reviewers(plan)
    files = [_file(tmp_path / "a.json", plan, a, "ann"), _file(tmp_path / "b.json", plan, b, "bo")]
    assert main(["page", "--root", str(root), "--reviewer", "cy", "--adjudicate", *files]) == 0
    page = root.joinpath(*REVIEW, "adjudicate-cy.html").read_text()
    data = json.loads(re.search(r"id='review-data'>(.*?)</script>", page, re.S).group(1))
    differ = [i for i in b if a[i] != b[i]]
    assert data["mode"] == "adjudicate"
    assert [x["item_id"] for x in data["items"]] == [i for i in plan["item_id"] if i in differ]
    first = data["items"][0]
    assert first["others"] == f"ann: {a[first['item_id']]}; bo: {b[first['item_id']]}"
