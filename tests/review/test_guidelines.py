"""CancerGUIDE's chooser review: the plan over the chooser's cases, a page that hides which
path is the target, and the import writing the chooser validation the study reads."""

import json
import re
import shutil

import pandas as pd
import pytest

from oncoeval.review.__main__ import main
from oncoeval.review.page import LABEL_FORMAT
from oncoeval.stats import BootstrapSettings
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
    confusion = pd.read_csv(tmp_path / "confusion.tsv", sep="\t").set_index("human")
    kept = {f"s{k}|structured" for k, d in enumerate(DECISIONS) if d == "chosen_both_orders"}
    for human in ("target", "other"):
        for verdict in ("target", "other"):
            expected = sum(
                (r.human == human) and ((r.item_id in kept) == (verdict == "target"))
                for r in written.itertuples()
            )
            assert confusion.loc[human, f"judge_{verdict}"] == expected


def test_a_contains_phi_guidelines_study_gets_no_review_page(benchmark, tmp_path):
    phi = tmp_path / "phi.yaml"
    phi.write_text("studies: {guidelines: {contains_phi: true}}\n")
    args = ["page", "--root", str(benchmark), "--study", "guidelines"]
    with pytest.raises(SystemExit, match="contains_phi is true"):
        main([*args, "--configfile", "config/config.yaml", "--configfile", str(phi)])
    assert not benchmark.joinpath(*REVIEW, "page.html").exists()


def test_a_chooser_label_off_its_scale_is_refused_naming_the_row(tmp_path):
    from oncoeval.errors import InputError
    from oncoeval.studies.guidelines.chooser_validation import read_labels

    path = tmp_path / "cv.tsv"
    path.write_text(
        "item_id\ttarget_path\tother_path\thuman\n"
        "s1|structured\troot -> a\troot -> b\ttarget\n"
        "s2|structured\troot -> a\troot -> b\tmaybe\n"
    )
    with pytest.raises(InputError, match=r"row 3.*human must be target or other, not 'maybe'"):
        read_labels(path)
