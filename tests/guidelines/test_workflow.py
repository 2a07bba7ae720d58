"""The guidelines study end to end with replayed models: one answers with the expert labels,
one with the labels of other patients (shuffled); the oracle also plays generator and chooser."""

import json

import pandas as pd
import pytest

from oncoeval.studies.guidelines.demo import answer
from oncoeval.studies.guidelines.notes import load_labelled
from oncoeval.studies.guidelines.score import SCORE_COLUMNS
from oncoeval.studies.guidelines.synthetic import sample_targets
from oncoeval.studies.guidelines.tree import load_tree
from tests.conftest import (
    REPO,
    WORKFLOW_PARTS,
    dry_run_jobs,
    other_studies_off,
    run_snakemake,
    write_config,
)

from .conftest import DEMO

pytestmark = pytest.mark.slow  # a whole workflow run (about 30 jobs)

K = 2
N_TARGETS = 2


def write_set(folder, name, rows):
    path = folder / "guidelines" / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"request_id": r, "text": t}) + "\n" for r, t in rows))


def replay_answers(root):
    tree = load_tree(DEMO / "guideline.json")
    usable, _ = load_labelled(DEMO / "labelled_notes.jsonl", tree, trim=True)
    labels = {u["patient_id"]: u["label_path"] for u in usable}
    unlabelled = ["u01", "u02", "u03"]
    ids = sorted(labels)
    shuffled = {pid: labels[ids[(i + 1) % len(ids)]] for i, pid in enumerate(ids)}
    oracle, other = root / "oracle", root / "shuffled"
    # the oracle's rollouts are the labels; on unlabelled notes it answers the small-cell path
    small_cell = ["LUNG-1-1", "LUNG-1-3"]
    for folder, paths in ((oracle, labels), (other, shuffled)):
        rollouts = [(p, answer(paths.get(p, small_cell))) for p in ids + unlabelled]
        write_set(
            folder, "rollouts", [(f"{p}#r{i}", text) for p, text in rollouts for i in range(K)]
        )
    targets = sample_targets(tree, N_TARGETS, seed=0)
    write_set(
        oracle, "synth_record", [(f"{t['synth_id']}|structured", '{"age": 60}') for t in targets]
    )
    # the first record leads back to another path than its target: dropped before its note
    first, second = (t["target_path"].split(" -> ") for t in targets)
    write_set(
        oracle,
        "synth_record_predict",
        [("syn01|record", answer(second)), ("syn02|record", answer(second))],
    )
    for variant in ("structured", "unstructured"):
        write_set(
            oracle,
            f"synth_note_{variant}",
            [
                (f"{t['synth_id']}|{variant}", f"Synthetic note for {t['synth_id']}.")
                for t in targets
            ],
        )
    # on its own notes the generator: fails on syn01's (dropped, generator_unparseable),
    # regenerates syn02's structured target, and misses syn02's unstructured one, where the
    # chooser then picks the target in both orders
    write_set(
        oracle,
        "synth_predict",
        [
            ("syn01|unstructured#r0", "no idea"),
            ("syn02|structured#r0", answer(second)),
            ("syn02|unstructured#r0", answer(first)),
        ],
    )
    write_set(
        oracle,
        "synth_choose",
        [
            ("syn02|unstructured|target_first", '{"choice": "A"}'),
            ("syn02|unstructured|target_second", '{"choice": "B"}'),
        ],
    )
    items = [f"{t['synth_id']}|{v}" for t in targets for v in ("structured", "unstructured")]
    write_set(
        other, "synth_predict", [(f"{i}#r0", answer(["LUNG-1-1", "LUNG-1-3"])) for i in items]
    )
    return oracle, other


def config(oracle, other, extra_models=()):
    models = [
        {"id": "oracle", "backend": "replay", "path": str(oracle)},
        {"id": "shuffled", "backend": "replay", "path": str(other)},
        *extra_models,
    ]
    return {
        "models": models,
        "evaluate": [m["id"] for m in models],
        "studies": {
            # Only this study: the default config enables the others.
            **other_studies_off("guidelines"),
            "guidelines": {
                "enabled": True,
                "evaluate": [m["id"] for m in models],
                "judges": {"generator": "oracle", "chooser": "oracle"},
                "rollouts": {"k": K, "temperature": 1.0, "max_new_tokens": 32},
                "synthetic": {"n_targets": N_TARGETS, "max_new_tokens": 32},
                "consistency": {"pool": ["unlabelled", "labelled"]},
                "meta_classifier": {"repeats": 2},
            },
        },
        "bootstrap": {"n_resamples": 200, "seed": 0},
    }


def tsv(path):
    return pd.read_csv(path, sep="\t", dtype={"patient_id": str})


@pytest.fixture(scope="module")
def finished(tmp_path_factory):

    workdir = tmp_path_factory.mktemp("guidelines")
    for part in WORKFLOW_PARTS:
        if (REPO / part).exists():
            (workdir / part).symlink_to(REPO / part)
    oracle, other = replay_answers(workdir / "replay")
    cfg = write_config(workdir, config(oracle, other))
    run_snakemake(workdir, "--configfile", str(cfg))
    return workdir, oracle, other


def test_oracle_scores_one_and_shuffled_scores_less(finished):
    workdir, _, _ = finished
    res = workdir / "results" / "guidelines"
    t1 = tsv(res / "tables" / "table1_expert.tsv").set_index("model")
    assert t1.loc["oracle", "path_overlap"] == 1.0 and t1.loc["oracle", "treatment_match"] == 1.0
    assert t1.loc["shuffled", "treatment_match"] == 0.0  # every demo label ends elsewhere
    assert 0 < t1.loc["shuffled", "path_overlap"] < 1
    assert t1.loc["oracle", "n_patients"] == 11  # p12 has no usable label
    rollouts = tsv(res / "rollouts" / "oracle.tsv")
    assert list(rollouts.columns[:5]) == [
        "patient_id",
        "rollout",
        "path",
        "valid",
        "invalid_reason",
    ]
    assert len(rollouts) == (11 + 3) * K and rollouts["valid"].all()
    scores = tsv(res / "scores" / "shuffled.tsv")
    assert list(scores.columns) == SCORE_COLUMNS  # as declared by the score stage
    excluded = tsv(res / "prepared" / "excluded_labels.tsv")
    assert excluded["patient_id"].tolist() == ["p12"]
    # p02 carries a second annotator's label (the same path): agreement 1 between them
    annotators = tsv(res / "tables" / "annotators.tsv")
    between = annotators[annotators["scope"] == "between annotators"].iloc[0]
    assert between["n_notes"] == 1 and between["treatment_match"] == 1.0
    oracle_second = annotators[
        (annotators["scope"] == "oracle") & (annotators["annotator"] == "demo-author-2")
    ]
    assert oracle_second["n_notes"].tolist() == [1]


def test_proxies_meta_classifier_and_error_analysis_are_written(finished):
    workdir, _, _ = finished
    res = workdir / "results" / "guidelines"
    bench = tsv(res / "synthetic" / "benchmark.tsv").set_index("item_id")
    assert bench["decision"].to_dict() == {
        "syn01|structured": "record_path_mismatch",
        "syn01|unstructured": "generator_unparseable",
        "syn02|structured": "regenerated",
        "syn02|unstructured": "chosen_both_orders",
    }
    assert bench["kept"].tolist() == [False, False, True, True]
    assert "record_path_mismatch: 1" in (res / "synthetic" / "benchmark.md").read_text()
    proxy = tsv(res / "tables" / "proxy_scores.tsv")
    syn = proxy[(proxy.model == "oracle") & (proxy.proxy == "synthetic_structured")]
    assert syn["accuracy"].tolist() == [1.0, 1.0]
    agree = tsv(res / "tables" / "proxy_agreement.tsv")
    assert len(agree) == 12 and set(agree["proxy"]) >= {"cross_model_path", "synthetic_structured"}
    meta = tsv(res / "tables" / "meta_classifier.tsv")
    assert set(meta["feature_set"]) == {"base", "internal", "aggregated", "base_aggregated", "all"}
    # the oracle is always right, so the classifier cannot train when the shuffled one is held out
    assert "single class" in meta[meta.held_out_model == "shuffled"]["status"].iloc[0]
    errors = tsv(res / "tables" / "error_analysis.tsv").set_index("model")
    assert (
        errors.loc["oracle", "n_label_errors"] == 0
        and errors.loc["shuffled", "n_label_errors"] == 11
    )
    for fig in ("roc_base", "roc_feature_sets", "proxy_heatmap", "accuracy_by_consistency"):
        assert (res / "figures" / f"{fig}.png").stat().st_size > 1000
    for table in (
        "table1_expert",
        "proxy_agreement",
        "consistency_accuracy",
        "meta_classifier",
        "clustering",
        "error_analysis",
    ):
        assert (res / "tables" / f"{table}.md").read_text().startswith("# ")


def test_adding_a_model_reruns_only_its_jobs_and_the_aggregates(finished):
    workdir, oracle, other = finished
    extra = {"id": "shuffled-again", "backend": "replay", "path": str(other)}
    cfg = write_config(workdir, config(oracle, other, [extra]), name="more.yaml")
    jobs = dry_run_jobs(workdir, configfile=cfg)
    assert jobs["generate"] == 2  # its rollouts and its synthetic predictions
    assert (
        jobs["guidelines_parse"] == jobs["guidelines_score"] == jobs["guidelines_proxy_scores"] == 1
    )
    assert "guidelines_synth_benchmark" not in jobs and "guidelines_prepare" not in jobs
