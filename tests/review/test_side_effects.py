"""The side-effect matcher's review: the plan over (listed item, reference term) pairs, the page,
and the import writing a matcher validation file the study reads."""

import json
import re
import shutil

import pandas as pd
import pytest

from oncoeval.review.__main__ import main
from oncoeval.review.page import LABEL_FORMAT
from oncoeval.review.side_effects import pair_id
from oncoeval.studies.side_effects.validation import candidate_table, read_validation
from tests.review.inputs import REPO

REVIEW = ("results", "side_effects", "review")
TERMS = [
    "skin redness", "itching of the treated skin", "fatigue", "breast tenderness",
    "dry skin peeling", "skin infection", "breast firmness", "skin darkening",
]  # fmt: skip
# wording -> the term the matcher pairs it with (None: unpaired)
WORDINGS = {
    "red skin": "skin redness", "itchy skin": "itching of the treated skin",
    "tiredness": "fatigue", "sore breast": "breast tenderness", "flaky skin": "dry skin peeling",
    "wound infection": "skin infection", "hard breast": "breast firmness",
    "tanned skin": "skin darkening", "nausea": None, "hair loss": None, "cough": None,
    "sunburn-like rash": None,
}  # fmt: skip


def _matches(lists):
    rows = []
    for k, items in enumerate(lists):
        pairs = [[i, TERMS.index(WORDINGS[w])] for i, w in enumerate(items) if WORDINGS[w]]
        rows.append(
            {
                "key": f"ref|p{k}|specified|ff", "kind": "reference", "profile_id": f"p{k}",
                "variant": "specified", "regime": "ff", "site": "APBI", "matcher": "llm",
                "left": [w.title() for w in items], "right": TERMS, "pairs": pairs,
                "matched": [], "status": "ok", "reason": None,
            }
        )  # fmt: skip
    return "".join(json.dumps(r) + "\n" for r in rows)


@pytest.fixture
def matched(tmp_path):
    return matched_root(tmp_path)


def matched_root(tmp_path):
    """A run's matched side-effect lists of the demo config's two evaluated ids, and the
    repository's matcher validation file where the demo config names it."""
    root = tmp_path / "run"
    (root / "config").mkdir(parents=True)
    shutil.copy(REPO / "config" / "config.yaml", root / "config" / "config.yaml")
    val = root / "resources" / "side_effects" / "matcher_validation.tsv"
    val.parent.mkdir(parents=True)
    shutil.copy(REPO / "resources" / "side_effects" / "matcher_validation.tsv", val)
    results = root / "results" / "side_effects"
    (results / "matches").mkdir(parents=True)
    (results / "prepared").mkdir()
    words = list(WORDINGS)
    lists = [words[k : k + 5] for k in range(0, 8)]
    (results / "matches" / "smollm2.jsonl").write_text(_matches(lists[:4]))
    (results / "matches" / "side-effects-reference-replay.jsonl").write_text(_matches(lists[4:]))
    (results / "prepared" / "profiles.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "profile_id": f"p{k}",
                    "site": "APBI",
                    "base": "b",
                    "specified": f"Profile {k}: breast radiation (APBI), <b>x</b>.",
                }
            )
            + "\n"
            for k in range(8)
        )  # fmt: skip
    )
    return root


def _page_data(path):
    page = path.read_text()
    return page, json.loads(re.search(r"id='review-data'>(.*?)</script>", page, re.S).group(1))


def test_the_plan_draws_item_term_pairs_by_the_matchers_verdict(matched):
    root = matched
    assert main(["page", "--root", str(root), "--study", "side_effects", "--labels", "30"]) == 0
    where = root.joinpath(*REVIEW)
    plan = pd.read_csv(where / "plan.tsv", sep="\t", dtype={"item_id": str})
    # 12 wordings x 8 terms, none identical: 96 distinct pairs; 8 of them paired by the matcher
    sizes = plan.groupby("stratum")["n_stratum"].first().to_dict()
    assert sizes == {0: 88, 1: 8}
    for _, rows in plan.groupby("stratum"):
        assert (rows["inclusion_probability"] == rows["n_planned"] / rows["n_stratum"]).all()
        assert len(rows) == rows["n_planned"].iloc[0]
    assert len(plan) == 30
    page, data = _page_data(where / "page.html")
    assert data["study"] == "side_effects"
    assert [o["value"] for o in data["scale"]] == [0, 1]
    first = data["items"][0]
    assert set(first) >= {"item", "term", "list", "profile"}
    assert "\u25b6 " + first["item"] in first["list"].lower()
    assert first["profile"].startswith("Profile ")
    # Blinded: no model id, and no verdict (the plan's strata stay out of the page)
    assert "smollm2" not in page and "reference-replay" not in page
    assert all("stratum" not in it for it in data["items"])
    assert "pairs, drawn at random within the matcher" in data["notices"][1]


def test_import_writes_a_matcher_validation_file_the_study_reads(matched, tmp_path, capsys):
    root = matched
    assert main(["page", "--root", str(root), "--study", "side_effects", "--labels", "30"]) == 0
    where = root.joinpath(*REVIEW)
    plan = pd.read_csv(where / "plan.tsv", sep="\t", dtype={"item_id": str})
    items = {r["item_id"]: r for r in map(json.loads, (where / "items.jsonl").open())}
    # Truth: the matcher's pairs are right; reviewer bo disagrees on the first two items.
    truth = {i: int(WORDINGS.get(items[i]["item"]) == items[i]["term"]) for i in plan["item_id"]}
    b = {i: (1 - v if k < 2 else v) for k, (i, v) in enumerate(truth.items())}
    files = []
    for name, labels in (("ann", truth), ("bo", b)):
        doc = {
            "format": LABEL_FORMAT, "study": "side_effects", "plan_id": "x", "mode": "label",
            "reviewer": name,
            "labels": [
                {"item_id": i, "label": v, "note": "", "answer_sha256": items[i]["answer_sha256"]}
                for i, v in labels.items()
            ],
        }  # fmt: skip
        files.append(tmp_path / f"{name}.json")
        files[-1].write_text(json.dumps(doc))
    assert main(["import", "--root", str(root), "--study", "side_effects", *map(str, files)]) == 0
    out = capsys.readouterr().out
    assert "Point studies.side_effects.validation at" in out
    written = where / "matcher_validation.tsv"
    val = read_validation(written)  # the study's own reader accepts it
    raw = pd.read_csv(written, sep="\t", comment="#", dtype=str, keep_default_na=False)
    reviewed = raw[raw["inclusion_probability"] != ""]
    # 28 settled (two disputed items are left out until adjudicated), each at m_h / N_h
    assert len(reviewed) == 28
    settled = plan[~plan["item_id"].isin(list(truth)[:2])]
    m = settled.groupby("stratum").size()
    for r in reviewed.itertuples():
        h = int(plan.set_index("item_id").loc[pair_id(r.prediction, r.reference), "stratum"])
        assert float(r.inclusion_probability) == pytest.approx(m[h] / {0: 88, 1: 8}[h])
        assert (r.same == "yes") == bool(truth[pair_id(r.prediction, r.reference)])
        assert r.kind == ("lay" if r.same == "yes" else "negative")
    # The configured file's rows are carried over, and the site's terms added as term rows
    configured = read_validation(REPO / "resources" / "side_effects" / "matcher_validation.tsv")
    # (a configured row wording a new term as another term's wording is left out, and said)
    new_terms = set(TERMS) - set(configured["reference"])
    gone = configured["prediction"].isin(new_terms)
    assert len(val) == len(configured) - gone.sum() + 28 + len(new_terms)
    assert f"left out {gone.sum()} configured rows that word a new reference term" in out
    assert set(TERMS) <= set(val.loc[val["kind"] == "term", "reference"])
    # The next run's matcher validation reads it: the lexical matcher on every wording
    table = candidate_table(val, REPO / "resources" / "side_effects" / "synonyms.tsv", None)
    assert table.loc[0, "n_wordings"] == val.loc[val["kind"] != "term", "prediction"].nunique()


def test_a_contains_phi_side_effects_study_gets_no_review_page(matched, tmp_path):
    phi = tmp_path / "phi.yaml"
    phi.write_text("studies: {side_effects: {contains_phi: true}}\n")
    args = ["page", "--root", str(matched), "--study", "side_effects"]
    with pytest.raises(SystemExit, match="contains_phi is true"):
        main([*args, "--configfile", "config/config.yaml", "--configfile", str(phi)])
    assert not matched.joinpath(*REVIEW, "page.html").exists()
