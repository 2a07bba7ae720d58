"""Workflow run of the coral study with a replay model that answers with the gold tuples."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from oncoeval.studies.coral.reference_replay import gold_answer
from oncoeval.studies.coral.score import SCORE_COLUMNS
from oncoeval.studies.coral.tasks import SUBTYPES
from tests.conftest import (
    REPO,
    dry_run_jobs,
    other_studies_off,
    run_snakemake,
    without_report,
    write_config,
)

DEMO = REPO / "resources" / "demo" / "coral"


def coral_config(replay_dir: Path, subtypes, sheet=None) -> dict:
    return {
        "models": [{"id": "gold", "backend": "replay", "path": str(replay_dir)}],
        "evaluate": ["gold"],
        "studies": {
            # Only this study: the default config enables the others.
            **other_studies_off("coral"),
            "coral": {
                "enabled": True,
                "evaluate": ["gold"],  # the demo's own list names its reference replay
                "notes_dir": str(DEMO / "notes"),
                "metadata": str(DEMO / "metadata.tsv"),
                "subtypes": subtypes,
                "max_new_tokens": 64,
                "review": {"sheet": sheet},
            },
        },
        "bootstrap": {"n_resamples": 200, "ci": 0.95, "seed": 0},
    }


@pytest.mark.slow
def test_replay_of_gold_tuples_scores_exact_match_one(workdir):
    subtypes = list(SUBTYPES)
    # first pass: prepare and prompt only, to learn the request ids and the gold
    cfg = write_config(workdir, coral_config(workdir / "replay", subtypes))
    (workdir / "replay" / "coral").mkdir(parents=True)
    run_snakemake(
        workdir,
        "-p",  # a flag ends --configfile's list of files, so what follows are targets
        "results/coral/requests/extraction.jsonl",
        "results/coral/gold/gold.tsv",
        configfile=cfg,
    )
    gold = pd.read_csv(
        workdir / "results/coral/gold/gold.tsv", sep="\t", dtype=str, keep_default_na=False
    )
    assert set(gold["view"]) == {"published", "clean"}
    gold = gold[gold["view"] == "published"]  # the model answers with the published gold
    requests = [
        json.loads(x)
        for x in (workdir / "results/coral/requests/extraction.jsonl").read_text().splitlines()
    ]
    assert len(requests) == 4 * 2 * 14  # four notes, two sections each, 14 subtypes
    answers = []
    for req in requests:
        m = req["meta"]
        rows = gold[
            (gold["doc_id"] == m["doc_id"])
            & (gold["section"] == m["section"])
            & (gold["subtype"] == m["subtype"])
        ]
        answers.append({"request_id": req["request_id"], "text": gold_answer(rows, m["subtype"])})
    (workdir / "replay" / "coral" / "extraction.jsonl").write_text(
        "\n".join(json.dumps(a) for a in answers) + "\n"
    )
    cfg = write_config(
        workdir,
        coral_config(workdir / "replay", subtypes, sheet=str(DEMO / "review_sheet_filled.tsv")),
    )
    run_snakemake(workdir, configfile=cfg)

    scores = pd.read_csv(workdir / "results/coral/scores/gold.tsv", sep="\t")
    assert list(scores.columns) == SCORE_COLUMNS  # as declared by the score stage
    assert set(scores["gold_view"]) == {"published", "clean"}
    clean_scores = scores[scores["gold_view"] == "clean"]
    scores = scores[scores["gold_view"] == "published"]
    # AdditionalTesting (stage, TNM, grade) is never scored in the published view
    assert len(scores) == 4 * 2 * (sum(len(s.fields) for s in SUBTYPES.values()) - 3)
    assert len(clean_scores) == 4 * 2 * sum(len(s.fields) for s in SUBTYPES.values())
    assert not scores["unscored"].any()
    assert (scores["em_f1"] == 1).all()
    assert scores["bleu4"].round(9).eq(1).all() and scores["rouge1"].round(9).eq(1).all()
    assert (scores["parse_failures"] == 0).all()
    assert (scores["n_pred"] == scores["n_gold"]).all()

    overall = pd.read_csv(workdir / "results/coral/tables/overall.tsv", sep="\t")
    assert set(overall["view"]) == {"published", "gold_present", "informative", "clean"}
    published_views = overall[overall["view"] != "clean"]
    assert published_views["em_f1"].round(9).eq(1).all()
    # the published gold differs from the clean one (no merging, "ER +" ...): not a perfect match
    assert overall.loc[overall["view"] == "clean", "em_f1"].iloc[0] < 1
    assert (overall["n_unscored"] == 0).all()
    for table in (
        "by_field",
        "by_task",
        "by_cancer_type",
        "kruskal_gender",
        "kruskal_race",
        "expert_review",
    ):
        assert (workdir / f"results/coral/tables/{table}.md").exists()
    kw = pd.read_csv(workdir / "results/coral/tables/kruskal_gender.tsv", sep="\t")
    assert (kw["note"] == "all values equal").all()  # a perfect model leaves nothing to test
    for metric in ("bleu4", "rouge1", "em_f1"):
        for figure in ("figure3", "figureS2"):
            assert (workdir / f"results/coral/figures/{figure}_{metric}.png").stat().st_size > 0
    sheet = pd.read_excel(workdir / "results/coral/review/gold_sheet.xlsx", dtype=str)
    assert {"Entity", "Relation"} == set(sheet["kind"])

    # adding a model reruns only its own jobs and the aggregate that combines models
    cfg_dict = coral_config(
        workdir / "replay", subtypes, sheet=str(DEMO / "review_sheet_filled.tsv")
    )
    cfg_dict["models"].append({"id": "gold2", "backend": "replay", "path": str(workdir / "replay")})
    cfg_dict["evaluate"] = cfg_dict["studies"]["coral"]["evaluate"] = ["gold", "gold2"]
    jobs = without_report(
        dry_run_jobs(workdir, configfile=write_config(workdir, cfg_dict, "two-models.yaml"))
    )
    assert jobs == {
        "generate": 1,
        "coral_parse": 1,
        "coral_score": 1,
        "coral_aggregate": 1,
        "model_calls_table": 1,  # counts calls per model: a new model adds a row
        "compare_models": 1,  # every pair of models: a new model adds pairs
        "all": 1,
    }
