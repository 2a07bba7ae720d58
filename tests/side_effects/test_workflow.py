"""Workflow runs of the side_effects block through real Snakemake, with replay models."""

import json
import shutil

import pandas as pd
import pytest
import yaml

from tests.conftest import REPO, dry_run_jobs, run_snakemake, without_report, write_config

SE = "results/side_effects"
OTHERS = {
    "cancer_myth": {"enabled": False},
    "coral": {"enabled": False},
    "guidelines": {"enabled": False},
}


def _config(workdir, models, study=None):
    evaluated = [m["id"] for m in models if m["id"] != "judge"]
    return write_config(
        workdir,
        {
            "models": models,
            "evaluate": evaluated,
            # The study's own list: the demo's names its reference replay beside SmolLM2.
            "studies": {
                "side_effects": {"enabled": True, "evaluate": list(evaluated), **(study or {})},
                **OTHERS,
            },
            "bootstrap": {"n_resamples": 200, "seed": 0},
        },
    )


def _reference_answers(workdir, replay_dir, name="lists"):
    """Replay answers that list exactly the site's reference items, as a bullet list."""
    reference = pd.read_csv(workdir / SE / "prepared/reference.tsv", sep="\t")
    rows = []
    for line in (workdir / SE / f"requests/{name}.jsonl").read_text().splitlines():
        req = json.loads(line)
        items = reference.loc[reference.site == req["meta"]["site"], "side_effect"]
        rows.append(
            {"request_id": req["request_id"], "text": "\n".join(f"• {i.title()}" for i in items)}
        )
    folder = replay_dir / "side_effects"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.slow
def test_responses_equal_to_the_reference_score_one_everywhere(workdir, tmp_path):
    replay = tmp_path / "replay"
    replay.mkdir()
    cfg = _config(workdir, [{"id": "oracle", "backend": "replay", "path": str(replay)}])
    # "-p" ends --configfile's list of values, so that the target is read as a target
    run_snakemake(workdir, "-p", f"{SE}/requests/lists.jsonl", configfile=cfg)
    _reference_answers(workdir, replay)
    run_snakemake(workdir, configfile=cfg)

    scores = pd.read_csv(workdir / SE / "scores/oracle.tsv", sep="\t")
    assert len(scores) == 6 * 2 * 4
    assert set(scores.status) == {"ok"}
    for column in ("precision", "recall", "f1"):
        assert (scores[column] == 1.0).all(), column
    assert (scores.n_non_list_lines == 0).all()
    strata = scores[[c for c in scores.columns if c.startswith("recall_")]]
    assert ((strata == 1.0) | strata.isna()).all().all()
    overlap = pd.read_csv(workdir / SE / "overlap/oracle.tsv", sep="\t")
    assert len(overlap) == 6 * 4 and (overlap.overlap == 1.0).all()

    table1 = pd.read_csv(workdir / SE / "tables/table1.tsv", sep="\t")
    assert table1.loc[0, ["precision", "precision_ci_high", "base_f1"]].tolist() == [1, 1, 1]
    # a perfect score on every one of 6 profiles is not certainty: a bounded score with no
    # spread gets the Wilson-type bound with n = G = 6 and t at 5 df, n / (n + t^2) = 6 / 12.6
    # (oncoeval.stats.compare.mean_ci), not a zero-width interval
    t5 = 2.570582
    assert table1.loc[0, "precision_ci_low"] == pytest.approx(6 / (6 + t5**2), abs=1e-5)
    table2 = pd.read_csv(workdir / SE / "tables/table2.tsv", sep="\t")
    assert table2.loc[0, "delta_f1"] == 0
    table5 = pd.read_csv(workdir / SE / "tables/table5.tsv", sep="\t")
    assert table5.loc[0, ["overlap_ff", "overlap_ff_lsc"]].tolist() == [1, 1]
    for i in range(1, 8):
        assert (workdir / SE / f"tables/table{i}.md").read_text().startswith("# Table")
    agreement = pd.read_csv(workdir / SE / "tables/matcher_agreement.tsv", sep="\t")
    assert {"lexical", "embedding@0.50", "embedding@0.60 earlier"} <= set(agreement.matcher)
    assert agreement.loc[agreement.selected, "matcher"].tolist() == ["embedding@0.50"]
    assert (agreement.loc[agreement.rule == "assignment", "distinct_term_pairs"] == 0).all()
    # the configured matcher as a judge of the labels: the same decisions, with kappa and rates
    judge = pd.read_csv(workdir / SE / "tables/judge_agreement.tsv", sep="\t").set_index("judge")
    assert judge.index.tolist() == ["embedding@0.50"]
    selected = agreement.set_index("matcher").loc["embedding@0.50"]
    assert judge.loc["embedding@0.50", "exact_agreement"] == pytest.approx(selected.agreement)
    assert 0 < judge.loc["embedding@0.50", "cohen_kappa"] < 1
    confusion = pd.read_csv(workdir / SE / "tables/judge_confusion.tsv", sep="\t")
    yes = confusion.set_index("human").loc["yes"]  # the terms (all matched) and lay wordings
    assert yes.judge_yes + yes.judge_no == selected.n_terms + selected.n_positive
    assert yes.judge_no == selected.fn
    per_class = pd.read_csv(workdir / SE / "tables/judge_per_class.tsv", sep="\t")
    assert set(per_class["class"]) == {"yes", "no"}
    assert (workdir / SE / "figures/precision_recall.png").stat().st_size > 0

    # a new model lists only its own jobs and the aggregates that combine models
    second = tmp_path / "replay2"
    shutil.copytree(replay, second)
    data = yaml.safe_load(cfg.read_text())
    data["models"].append({"id": "oracle2", "backend": "replay", "path": str(second)})
    data["evaluate"].append("oracle2")
    data["studies"]["side_effects"]["evaluate"].append("oracle2")
    cfg.write_text(yaml.safe_dump(data))
    jobs = without_report(dry_run_jobs(workdir, configfile=cfg))
    assert jobs == {
        "generate": 1,
        "side_effects_parse": 1,
        "side_effects_match": 1,
        "side_effects_score": 1,
        "side_effects_aggregate": 1,
        "model_calls_table": 1,
        "compare_models": 1,
        "all": 1,
    }


@pytest.mark.slow
def test_llm_matcher_through_a_judge_counts_unparseable_answers(workdir, tmp_path):
    replay = tmp_path / "replay"
    replay.mkdir()
    models = [
        {"id": "oracle", "backend": "replay", "path": str(replay)},
        {"id": "judge", "backend": "replay", "path": str(replay)},
    ]
    study = {
        "matcher": {"method": "llm"},
        "judges": {"matcher": "judge"},
        "regimes": ["ff", "ff_lsc"],
    }
    cfg = _config(workdir, models, study)
    # "-p" ends --configfile's list of values, so that the target is read as a target
    run_snakemake(workdir, "-p", f"{SE}/requests/lists.jsonl", configfile=cfg)
    _reference_answers(workdir, replay)
    run_snakemake(
        workdir,
        "-p",
        f"{SE}/requests/match--oracle.jsonl",
        f"{SE}/requests/validation.jsonl",
        configfile=cfg,
    )
    # The judge pairs equal items, except on one task where it rambles.
    judged, garbled = [], "ref|demo01|specified|ff"
    for line in (workdir / SE / "requests/match--oracle.jsonl").read_text().splitlines():
        req = json.loads(line)
        prompt = req["messages"][0]["content"]
        a = [ln.split(". ", 1)[1] for ln in prompt.splitlines() if ln[:1] == "A" and ". " in ln]
        b = [ln.split(". ", 1)[1] for ln in prompt.splitlines() if ln[:1] == "B" and ". " in ln]
        pairs = [f"A{i + 1} = B{b.index(x) + 1}" for i, x in enumerate(a) if x in b]
        text = "\n".join(pairs) or "NONE"
        if req["request_id"] == garbled:
            text = "I think A1 and B1 are similar."
        elif req["request_id"] == "ref|demo02|specified|ff":  # a reasoning model's answer
            text = "<think>A1 = B2? no: A1 - B1 fits better</think>\n" + text
        judged.append({"request_id": req["request_id"], "text": text})
    # A judge that answers the validation set as labelled: its wording's term, or NONE.
    labels = pd.read_csv(
        REPO / "resources/side_effects/matcher_validation.tsv", sep="\t", comment="#"
    )
    term_of = dict(labels.loc[labels.same == "yes", ["prediction", "reference"]].values)
    validation = []
    for line in (workdir / SE / "requests/validation.jsonl").read_text().splitlines():
        req = json.loads(line)
        prompt = req["messages"][0]["content"].splitlines()
        (wording,) = [ln.split(". ", 1)[1] for ln in prompt if ln.startswith("A1. ")]
        b = [ln.split(". ", 1)[1] for ln in prompt if ln[:1] == "B" and ". " in ln]
        term = term_of.get(wording)
        text = f"A1 = B{b.index(term) + 1}" if term in b else "NONE"
        validation.append({"request_id": req["request_id"], "text": text})
    folder = replay / "side_effects"
    (folder / "match--oracle.jsonl").write_text("".join(json.dumps(r) + "\n" for r in judged))
    (folder / "validation.jsonl").write_text("".join(json.dumps(r) + "\n" for r in validation))
    run_snakemake(workdir, configfile=cfg)

    scores = pd.read_csv(workdir / SE / "scores/oracle.tsv", sep="\t")
    bad = scores[scores.status != "ok"]
    assert bad[["profile_id", "variant", "regime", "status"]].values.tolist() == [
        ["demo01", "specified", "ff", "match_unparseable"]
    ]
    assert (scores.loc[scores.status == "ok", "f1"] == 1.0).all()
    table1 = pd.read_csv(workdir / SE / "tables/table1.tsv", sep="\t")
    assert table1.loc[0, "n_unscored"] == 1
    agreement = pd.read_csv(workdir / SE / "tables/matcher_agreement.tsv", sep="\t").set_index(
        "matcher"
    )
    # the judge that answers as labelled: every pair right, no distinct terms paired
    llm = agreement.loc["llm"]
    assert (llm.precision, llm.recall, llm.f1, llm.agreement) == (1, 1, 1, 1)
    assert (llm.distinct_term_pairs, llm.identical_matched, llm.n_unscored) == (0, 31, 0)
    judges = pd.read_csv(workdir / SE / "tables/judge_agreement.tsv", sep="\t").set_index("judge")
    assert judges.index.tolist() == ["embedding@0.50", "llm"]
    assert judges.loc["llm", ["exact_agreement", "cohen_kappa", "n_unscored"]].tolist() == [1, 1, 0]
