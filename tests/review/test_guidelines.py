"""CancerGUIDE's chooser review: the plan over the chooser's cases, a page that hides which
path is the target, and the import writing the chooser validation the study reads."""

import json
import re
import shutil

import pandas as pd
import pytest

from oncoeval.review.__main__ import main
from oncoeval.review.page import LABEL_FORMAT
from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.studies.guidelines.chooser_validation import write_chooser_validation
from tests.review.inputs import REPO

REVIEW = ("results", "guidelines", "review")
# 16 chooser cases (10 kept, 6 not), 3 regenerated and 1 unreadable (not in the population)
DECISIONS = ["chosen_both_orders"] * 10 + ["target_not_chosen"] * 6 + ["regenerated"] * 3
DECISIONS += ["chooser_unparseable"]


@pytest.fixture
def benchmark(tmp_path):
    root = tmp_path / "run"
    (root / "config").mkdir(parents=True)
    shutil.copy(REPO / "config" / "config.yaml", root / "config" / "config.yaml")
    synth = root / "results" / "guidelines" / "synthetic"
    synth.mkdir(parents=True)
    rows = [
        {"item_id": f"s{k}|structured", "synth_id": f"s{k}", "variant": "structured",
         "target_path": f"root -> t{k}", "status": "ok", "generator_path": f"root -> g{k}",
         "kept": d in ("chosen_both_orders", "regenerated"), "decision": d}
        for k, d in enumerate(DECISIONS)
    ]  # fmt: skip
    pd.DataFrame(rows).to_csv(synth / "benchmark.tsv", sep="\t", index=False)
    (synth / "notes.jsonl").write_text(
        "".join(
            json.dumps({"item_id": r["item_id"], "note": f"Note {k}: <i>pT1</i> N0."}) + "\n"
            for k, r in enumerate(rows)
        )
    )
    return root


def test_chooser_cases_plan_page_and_import_become_the_chooser_validation(benchmark, tmp_path):
    root = benchmark
    args = ["--root", str(root), "--study", "guidelines"]
    assert main(["page", *args, "--labels", "12"]) == 0
    where = root.joinpath(*REVIEW)
    plan = pd.read_csv(where / "plan.tsv", sep="\t", dtype={"item_id": str})
    assert plan.groupby("stratum")["n_stratum"].first().to_dict() == {0: 6, 1: 10}
    assert (plan["inclusion_probability"] == plan["n_planned"] / plan["n_stratum"]).all()
    page = (where / "page.html").read_text()
    data = json.loads(re.search(r"id='review-data'>(.*?)</script>", page, re.S).group(1))
    # Blinded: neither the verdict nor which path is the target is in the page
    assert "a_is_target" not in page and "chosen_both" not in page and "target_path" not in page
    firsts = [it["path_a"].startswith("root -> t") for it in data["items"]]
    assert 0 < sum(firsts) < len(firsts)  # the target is Path A on some cases, Path B on others
    assert all(it["note"].startswith("Note ") for it in data["items"])
    assert [(o["value"], o["name"]) for o in data["scale"]] == [(0, "A"), (1, "B")]
    # Truth: the target fits on even cases. The reviewer picks A (0) or B (1) accordingly.
    items = {r["item_id"]: r for r in map(json.loads, (where / "items.jsonl").open())}
    fits = {i: int(items[i]["case"][1:].split("|")[0]) % 2 == 0 for i in plan["item_id"]}
    labels = {i: (0 if fits[i] == items[i]["a_is_target"] else 1) for i in plan["item_id"]}
    doc = {
        "format": LABEL_FORMAT, "study": "guidelines", "plan_id": "x", "mode": "label",
        "reviewer": "ann",
        "labels": [
            {"item_id": i, "label": v, "note": "", "answer_sha256": items[i]["answer_sha256"]}
            for i, v in labels.items()
        ],
    }  # fmt: skip
    (tmp_path / "ann.json").write_text(json.dumps(doc))
    assert main(["import", *args, str(tmp_path / "ann.json")]) == 0
    written = pd.read_csv(where / "chooser_validation.tsv", sep="\t", comment="#", dtype=str)
    assert len(written) == 12
    for r in written.itertuples():
        assert (r.human == "target") == (int(r.item_id[1:].split("|")[0]) % 2 == 0)
        assert r.target_path == f"root -> t{r.item_id[1:].split('|')[0]}"
    # The study's chooser validation reads it: its confusion matrix, counted by hand
    out = {
        k: (tmp_path / f"{k}.tsv", tmp_path / f"{k}.md")
        for k in ("summary", "confusion", "per_class")
    }
    write_chooser_validation(
        root / "results/guidelines/synthetic/benchmark.tsv", where / "chooser_validation.tsv",
        out, BootstrapSettings(n_resamples=200),
    )  # fmt: skip
    # counted by hand, each label weighing 1 / its inclusion probability: the cells estimate
    # the 16 decided cases, n_labels counts the labels
    confusion = pd.read_csv(tmp_path / "confusion.tsv", sep="\t").set_index("human")
    kept = {f"s{k}|structured" for k, d in enumerate(DECISIONS) if d == "chosen_both_orders"}
    for human in ("target", "other"):
        for verdict in ("target", "other"):
            expected = sum(
                1 / float(r.inclusion_probability)
                for r in written.itertuples()
                if (r.human == human) and ((r.item_id in kept) == (verdict == "target"))
            )
            assert confusion.loc[human, f"judge_{verdict}"] == pytest.approx(expected, abs=1e-4)
        assert confusion.loc[human, "n_labels"] == (written["human"] == human).sum()
    assert confusion[["judge_target", "judge_other"]].to_numpy().sum() == pytest.approx(16)


def test_a_contains_phi_guidelines_study_gets_no_review_page(benchmark, tmp_path):
    phi = tmp_path / "phi.yaml"
    phi.write_text("studies: {guidelines: {contains_phi: true}}\n")
    args = ["page", "--root", str(benchmark), "--study", "guidelines"]
    with pytest.raises(SystemExit, match="contains_phi is true"):
        main([*args, "--configfile", "config/config.yaml", "--configfile", str(phi)])
    assert not benchmark.joinpath(*REVIEW, "page.html").exists()


def test_a_chooser_label_off_its_scale_is_refused_naming_the_row(tmp_path):
    from oncoeval.core.errors import InputError
    from oncoeval.studies.guidelines.chooser_validation import read_labels

    path = tmp_path / "cv.tsv"
    path.write_text(
        "item_id\ttarget_path\tother_path\thuman\n"
        "s1|structured\troot -> a\troot -> b\ttarget\n"
        "s2|structured\troot -> a\troot -> b\tmaybe\n"
    )
    with pytest.raises(InputError, match=r"row 3.*human must be target or other, not 'maybe'"):
        read_labels(path)


def test_chooser_validation_weighs_labels_by_their_inclusion_probability(tmp_path):
    """Chooser kept 10 cases, labelled 2 (p = 0.2, weight 5), both target; it rejected 4 and
    all 4 were labelled (p = 1), 2 target and 2 other; one hand-filled label (no p, weight 1)
    on a rejected case says other. Weighted table (rows human, columns chooser):
    target [[10, 2], other [0, 3]]; unweighted [[2, 2], [0, 3]]."""
    decisions = ["chosen_both_orders"] * 10 + ["target_not_chosen"] * 5
    cases = pd.DataFrame(
        {
            "item_id": [f"c{k}" for k in range(15)],
            "target_path": [f"t{k}" for k in range(15)],
            "generator_path": [f"g{k}" for k in range(15)],
            "decision": decisions,
        }
    )
    cases.to_csv(tmp_path / "benchmark.tsv", sep="\t", index=False)
    human = {"c0": "target", "c1": "target", "c10": "target", "c11": "target"}
    human |= {"c12": "other", "c13": "other", "c14": "other"}
    p = {"c0": "0.2", "c1": "0.2", "c10": "1", "c11": "1", "c12": "1", "c13": "1", "c14": ""}
    lines = ["item_id\ttarget_path\tother_path\thuman\tinclusion_probability"]
    lines += [f"{c}\tt{c[1:]}\tg{c[1:]}\t{h}\t{p[c]}" for c, h in human.items()]
    (tmp_path / "labels.tsv").write_text("\n".join(lines) + "\n")
    (tmp_path / "hand.tsv").write_text("\n".join(line.rsplit("\t", 1)[0] for line in lines) + "\n")

    def tables(labels):
        out = {
            k: (tmp_path / f"{k}.tsv", tmp_path / f"{k}.md")
            for k in ("summary", "confusion", "per_class")
        }
        settings = BootstrapSettings(n_resamples=300)
        write_chooser_validation(tmp_path / "benchmark.tsv", tmp_path / labels, out, settings)
        read = {k: pd.read_csv(out[k][0], sep="\t") for k in out}
        return (
            read["summary"].iloc[0],
            read["confusion"].set_index("human"),
            read["per_class"].set_index("class"),
        )

    summary, confusion, per_class = tables("labels.tsv")
    assert confusion.loc["target", ["judge_target", "judge_other", "n_labels"]].tolist() == [
        10,
        2,
        4,
    ]
    assert confusion.loc["other", ["judge_target", "judge_other", "n_labels"]].tolist() == [0, 3, 3]
    target = per_class.loc["target"]
    assert target.sensitivity == pytest.approx(10 / 12)  # unweighted: 2 / 4
    assert target.specificity == pytest.approx(1.0)
    assert target.sensitivity_ci_low <= 10 / 12 <= target.sensitivity_ci_high
    assert per_class.loc["other", "sensitivity"] == pytest.approx(1.0)
    assert per_class.loc["other", "specificity"] == pytest.approx(10 / 12)
    # p_o = 13/15; margins human (12, 3), chooser (10, 5): p_e = 135/225 = 0.6; kappa = 2/3
    assert summary.exact_agreement == pytest.approx(13 / 15)  # unweighted: 5 / 7
    assert summary.cohen_kappa == pytest.approx(2 / 3)
    assert summary.exact_agreement_ci_low <= 13 / 15 <= summary.exact_agreement_ci_high
    assert summary.n == 7
    assert summary.weights == "1/inclusion_probability (6 labels; 1 without one weigh 1)"
    assert (per_class["weights"] == summary.weights).all()
    # Without the inclusion probabilities every label weighs 1, and the tables say so
    summary, confusion, per_class = tables("hand.tsv")
    assert per_class.loc["target", "sensitivity"] == pytest.approx(2 / 4)
    assert summary.exact_agreement == pytest.approx(5 / 7)
    assert summary.weights == "equal" and "n_labels" not in confusion.columns
