"""The rules' side of the study (rules/guidelines.smk): result paths, declared outputs, final
targets and the per-rule input/param helpers (kept here so the .smk holds rules only).

Every helper takes the validated, filled config (or the study block) and returns plain values,
paths or input functions. Param helpers return only what a rule's output depends on.
"""

from __future__ import annotations

from ... import config as oc
from ..contract import Headline, Resampling, ResultPaths

STUDY = "guidelines"
paths = ResultPaths(STUDY)

# For the report and the summary (oncoeval.report): the study's category title, what its
# bootstrap resamples, and its headline measures per model.
REPORT_TITLE = "CancerGUIDE (guideline path tracing)"
# A note's k rollouts are averaged within the note first (they are never resampled apart); each
# patient has one note in the study's data, so the patient note is its own cluster.
RESAMPLING = Resampling(unit="patient note", cluster="patient note")
# Report columns that hold labels under a name the report's PHI rule reads as free text
# (oncoeval.report.phi): a rollout's `answer` is its kind (path, not_compliant, none).
REPORT_LABEL_COLUMNS = ("answer",)
HEADLINES = (
    Headline(STUDY, "tables/table1_expert.tsv", "path overlap", "path_overlap"),
    Headline(STUDY, "tables/table1_expert.tsv", "treatment match", "treatment_match"),
    Headline(
        STUDY,
        "tables/meta_classifier.tsv",
        "meta-classifier AUROC (all features, held-out model)",
        "auroc",
        (("held_out_model", "mean over models"), ("feature_set", "all")),
        per_unit=False,
    ),
)

# name -> path of every declared output (each written once here; rules and scripts use the name).
OUTPUTS_PREPARE = {
    "tree": paths.prepared("tree.json"),
    "notes": paths.prepared("notes.jsonl"),
    "excluded": paths.prepared("excluded_labels.tsv"),
    "summary": paths.table("guideline_tree"),
    "summary_md": paths("tables", "guideline_tree.md"),
}
OUTPUTS_REQUESTS = {"rollouts": paths.requests("rollouts")}
OUTPUTS_PARSE = {"rollouts": paths("rollouts", "{model}.tsv")}
OUTPUTS_SCORE = {"scores": paths.scores("{model}")}
OUTPUTS_PROXY = {"proxy": paths("proxy", "{model}.tsv")}
OUTPUTS_SYNTH_BENCHMARK = {
    "table": paths("synthetic", "benchmark.tsv"),
    "table_md": paths("synthetic", "benchmark.md"),
}


def _table(name: str) -> dict[str, str]:
    return {name: paths.table(name), f"{name}_md": paths("tables", f"{name}.md")}


# The aggregate stage: cross-model labels, the paper's tables and figures, their data files.
OUTPUTS_AGGREGATE = {
    "cross_labels": paths("cross_model", "labels.tsv"),
    "cross_features": paths("cross_model", "features.tsv"),
    "cross_scores": paths("cross_model", "proxy_scores.tsv"),
    **_table("table1_expert"),
    **_table("annotators"),
    **_table("consistency_accuracy"),
    **_table("accuracy_by_consistency"),
    "accuracy_by_consistency_figure": paths.figure("accuracy_by_consistency"),
    **_table("proxy_scores"),
    **_table("proxy_agreement"),
    **_table("compliance"),
    "proxy_heatmap": paths.figure("proxy_heatmap"),
    **_table("meta_classifier"),
    "meta_predictions": paths("meta_classifier", "predictions.tsv"),
    "meta_rows": paths("meta_classifier", "rows.tsv"),
    "roc_feature_sets": paths.figure("roc_feature_sets"),
    **_table("clustering"),
    **_table("error_analysis"),
    "divergence_points": paths("error_analysis", "divergence_points.tsv"),
    "divergence_pairs": paths("error_analysis", "divergence_pairs.tsv"),
    **_table("divergence_agreement"),
    "divergence_pairs_figure": paths.figure("divergence_pairs"),
}
# One ROC figure per configured feature set (expanded by aggregate_outputs).
ROC_FIGURE = paths.figure("roc_{feature_set}")

# The study's declared outputs (its final targets): what prepare, the per-model rules, the
# synthetic benchmark and the aggregate stage publish; prepared inputs and request sets are
# intermediate and stay in their rule's mapping.
OUTPUTS = {
    "summary": OUTPUTS_PREPARE["summary"],
    "summary_md": OUTPUTS_PREPARE["summary_md"],
    **OUTPUTS_PARSE,
    **OUTPUTS_SCORE,
    **OUTPUTS_PROXY,
    **{f"synthetic_{k}": v for k, v in OUTPUTS_SYNTH_BENCHMARK.items()},
    **OUTPUTS_AGGREGATE,
    "roc": ROC_FIGURE,
}


def optional_inputs(path) -> list[str]:
    return [path] if path else []


def feature_sets(block: dict) -> list[str]:
    return list(block["meta_classifier"]["feature_sets"])


def roc_figures(block: dict) -> list[str]:
    return [ROC_FIGURE.format(feature_set=fs) for fs in feature_sets(block)]


def aggregate_outputs(block: dict) -> dict:
    """The aggregate rule's outputs: the fixed ones and one ROC figure per feature set."""
    return {**OUTPUTS_AGGREGATE, "roc": roc_figures(block)}


def aggregate_settings(block: dict) -> dict:
    """The settings the aggregate stage reads (its params: a change reruns it)."""
    keys = ("consistency", "accuracy_bins", "meta_classifier", "error_top_n", "error_gamma")
    return {key: block[key] for key in keys}


def models(config: dict) -> list[str]:
    return oc.study_evaluated_models(config, STUDY)


def per_model(config: dict, pattern: str) -> list[str]:
    return [pattern.format(model=m) for m in models(config)]


def judge(config: dict, role: str) -> str | None:
    judges = oc.study_judges(config, STUDY)
    if role == "chooser":
        return judges.get("chooser") or judges.get("generator")
    return judges.get(role)


def judge_responses(config: dict, role: str, *requestsets: str) -> list[str]:
    mid = judge(config, role)
    if mid is None:
        return []
    return [paths.responses(mid, name) for name in requestsets]


def synthetic_enabled(config: dict) -> bool:
    return judge(config, "generator") is not None


def proxy_inputs(config: dict):
    """Input function of the per-model proxy rule (synthetic inputs only with a generator)."""

    def inputs(wildcards) -> dict:
        out = {
            "tree": OUTPUTS_PREPARE["tree"],
            "scores": paths.scores(wildcards.model),
            "rollouts": OUTPUTS_PARSE["rollouts"].format(model=wildcards.model),
        }
        if synthetic_enabled(config):
            out["benchmark"] = OUTPUTS_SYNTH_BENCHMARK["table"]
            out["predict"] = paths.responses(wildcards.model, "synth_predict")
        return out

    return inputs


def comparison_inputs(config: dict) -> dict:
    """Inputs of the model comparison beside the scores (oncoeval.compare): none."""
    return {}


def unit_scores(score_path, inputs: dict):
    """Per expert-labelled note: path overlap and treatment match, each the mean over the
    note's rollouts (NaN: no rollout could be read)."""
    import pandas as pd

    scores = pd.read_csv(score_path, sep="\t", dtype={"patient_id": str, "label": str})
    labelled = scores[scores["label"].fillna("") != ""]
    rows = [
        {
            "measure": h.measure,
            "unit": r["patient_id"],
            "cluster": r["patient_id"],
            "value": r[h.column],
        }
        for h in HEADLINES
        if h.per_unit
        for _, r in labelled.iterrows()
    ]
    return pd.DataFrame(rows, columns=["measure", "unit", "cluster", "value"])


def final_targets(config: dict) -> list[str]:
    """Every declared output: per-model ones for each evaluated model, one ROC figure per
    feature set, the synthetic benchmark only with a generator."""
    block = config["studies"][STUDY]
    synthetic = set(OUTPUTS_SYNTH_BENCHMARK.values())
    out = []
    for path in OUTPUTS.values():
        if path == ROC_FIGURE:
            out += roc_figures(block)
        elif "{model}" in path:
            out += per_model(config, path)
        elif path not in synthetic or synthetic_enabled(config):
            out.append(path)
    return out
