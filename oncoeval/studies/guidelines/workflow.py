"""The rules' side of the study (rules/guidelines.smk): result paths, declared outputs, what the
config checks and the report know of the study, and the per-rule input/param helpers (kept here
so the .smk holds rules only).

Every helper takes the validated, filled config (or the study block) and returns plain values,
paths or input functions. Param helpers return only what a rule's output depends on.
"""

from __future__ import annotations

from ...core import blocks as oc
from ..contract import (
    Answers,
    ExposureSource,
    Headline,
    ItemScore,
    Resampling,
    ResultPaths,
    Study,
    outputs,
    prompts_dir,
)

NAME = "guidelines"
paths = ResultPaths(NAME)

# The templates each step reads, by name (config/prompts/guidelines/<name>.txt); path prediction
# reads the one the block's predict_prompt names.
PROMPTS = prompts_dir(NAME)
TEMPLATES = {
    "record": "synth_record",
    "record_predict": "synth_record_predict",
    "structured_note": "synth_note_structured",
    "unstructured_note": "synth_note_unstructured",
    "choose": "choose_path",
}


def template(block: dict, step: str) -> str:
    """The template file of one step (``predict``: the block's ``predict_prompt``)."""
    name = block["predict_prompt"] if step == "predict" else TEMPLATES[step]
    return f"{PROMPTS}/{name}.txt"


def prompt_templates(block: dict) -> list[str]:
    """The templates a run reads: the chosen path-prediction one and every synthetic step's."""
    return [template(block, step) for step in ("predict", *TEMPLATES)]


# name -> path of every declared output (each written once here; rules and scripts use the name).
OUTPUTS_PREPARE = {
    "tree": paths.prepared("tree.json"),
    "notes": paths.prepared("notes.jsonl"),
    "excluded": paths.prepared("excluded_labels.tsv"),
    **paths.tables("guideline_tree"),
}
OUTPUTS_REQUESTS = {"rollouts": paths.requests("rollouts")}
OUTPUTS_PARSE = {"rollouts": paths("rollouts", "{model}.tsv")}
OUTPUTS_SCORE = {
    "scores": paths.scores("{model}"),
    # the per-unit scores (one row per rollout, with its unit and cluster)
    "rollout_scores": paths("rollout_scores", "{model}.tsv"),
}
OUTPUTS_PROXY = {"proxy": paths("proxy", "{model}.tsv")}
OUTPUTS_SYNTH_BENCHMARK = paths.tables("benchmark", folder="synthetic")
# The chooser against human labels of its cases (chooser_validation; oncoeval.studies.guidelines
# .chooser_validation), written only when the labels are set.
OUTPUTS_CHOOSER_VALIDATION = paths.tables("judge_agreement", "judge_confusion", "judge_per_class")


# The aggregate stage: cross-model labels, the paper's tables and figures, their data files.
OUTPUTS_AGGREGATE = {
    "cross_labels": paths("cross_model", "labels.tsv"),
    "cross_features": paths("cross_model", "features.tsv"),
    "cross_scores": paths("cross_model", "proxy_scores.tsv"),
    **paths.tables("table1_expert", "annotators", "consistency_accuracy"),
    **paths.tables("accuracy_by_consistency"),
    "accuracy_by_consistency_figure": paths.figure("accuracy_by_consistency"),
    **paths.tables("proxy_scores", "proxy_agreement", "compliance"),
    "proxy_heatmap": paths.figure("proxy_heatmap"),
    **paths.tables("meta_classifier"),
    "meta_predictions": paths("meta_classifier", "predictions.tsv"),
    "meta_rows": paths("meta_classifier", "rows.tsv"),
    "roc_feature_sets": paths.figure("roc_feature_sets"),
    **paths.tables("clustering", "error_analysis"),
    "divergence_points": paths("error_analysis", "divergence_points.tsv"),
    "divergence_pairs": paths("error_analysis", "divergence_pairs.tsv"),
    **paths.tables("divergence_agreement"),
    "divergence_pairs_figure": paths.figure("divergence_pairs"),
}
# One ROC figure per configured feature set (expanded by aggregate_outputs).
ROC_FIGURE = paths.figure("roc_{feature_set}")

# The study's published outputs (its final targets): what prepare, the per-model rules, the
# synthetic benchmark and the aggregate stage publish; prepared inputs and request sets are
# intermediate and stay in their rule's mapping.
OUTPUTS = {
    **paths.tables("guideline_tree"),
    **OUTPUTS_PARSE,
    **OUTPUTS_SCORE,
    **OUTPUTS_PROXY,
    **OUTPUTS_SYNTH_BENCHMARK,
    **OUTPUTS_CHOOSER_VALIDATION,
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
    return oc.study_evaluated_models(config, NAME)


def per_model(config: dict, pattern: str) -> list[str]:
    return [pattern.format(model=m) for m in models(config)]


def judge(block: dict, role: str) -> str | None:
    judges = block["judges"]
    if role == "chooser":
        return judges["chooser"] or judges["generator"]
    return judges[role]


def judge_responses(block: dict, role: str, *requestsets: str) -> list[str]:
    mid = judge(block, role)
    if mid is None:
        return []
    return [paths.responses(mid, name) for name in requestsets]


def synthetic_enabled(block: dict) -> bool:
    return judge(block, "generator") is not None


def proxy_inputs(block: dict):
    """Input function of the per-model proxy rule (synthetic inputs only with a generator)."""

    def inputs(wildcards) -> dict:
        out = {
            "tree": OUTPUTS_PREPARE["tree"],
            "scores": paths.scores(wildcards.model),
            "rollouts": OUTPUTS_PARSE["rollouts"].format(model=wildcards.model),
        }
        if synthetic_enabled(block):
            out["benchmark"] = OUTPUTS_SYNTH_BENCHMARK["benchmark"]
            out["predict"] = paths.responses(wildcards.model, "synth_predict")
        return out

    return inputs


def data_keys(block: dict) -> dict[str, bool]:
    return {
        "guideline": True,
        "labelled_notes": True,
        "unlabelled_notes": False,
        "chooser_validation": False,
    }


def judge_roles(block: dict) -> list[tuple[str, str]]:
    return [("judges.generator", "synthetic generator"), ("judges.chooser", "chooser")]


def target_wildcards(block: dict, models: list[str]) -> dict[str, list[str]]:
    return {"feature_set": feature_sets(block)}


def chooser_validated(block: dict) -> bool:
    return synthetic_enabled(block) and bool(block["chooser_validation"])


def unused_outputs(block: dict) -> list[str]:
    """The synthetic benchmark is built only with a generator, the chooser's validation only
    with human labels of its cases."""
    unused = [] if synthetic_enabled(block) else list(OUTPUTS_SYNTH_BENCHMARK)
    return unused + ([] if chooser_validated(block) else list(OUTPUTS_CHOOSER_VALIDATION))


def comparison_inputs(config: dict) -> dict:
    """Inputs of the model comparison beside the scores: the per-rollout scores."""
    return {"rollout_scores": per_model(config, OUTPUTS_SCORE["rollout_scores"])}


def unit_scores(score_path, inputs: dict):
    """Per rollout of an expert-labelled note (the model's ``rollout_scores`` file among
    ``inputs``): path overlap and treatment match, clustered by patient. Without that file,
    per note (the mean over its rollouts; NaN: no rollout could be read)."""
    from pathlib import Path

    import pandas as pd

    own = [p for p in inputs.get("rollout_scores", []) if Path(p).name == Path(score_path).name]
    if own:
        per_rollout = pd.read_csv(own[0], sep="\t", dtype={"unit": str, "cluster": str})
        return pd.DataFrame(
            [
                {"measure": h.measure, "unit": r.unit, "cluster": r.cluster, "value": v}
                for h in HEADLINES
                if h.per_unit
                for r, v in zip(per_rollout.itertuples(), per_rollout[h.column], strict=True)
            ],
            columns=["measure", "unit", "cluster", "value"],
        )
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


# What the report, the summary, the comparison and the config checks know of the study.
# The unit is one rollout (one answer of a model to an expert-labelled note); the cluster is the
# patient: the k rollouts of a note, and the notes of a patient, are resampled together, never
# apart. The study's data has one note per patient (patient_id names both).
RESAMPLING = Resampling(
    unit="rollout (one answer to an expert-labelled note)",
    cluster="patient (its note's rollouts, and its notes, together)",
)
HEADLINES = (
    # invalid_*: rollouts by kind of invalid answer, which the summary counts as unscored
    Headline(
        NAME,
        paths.rel.table("table1_expert"),
        "path overlap",
        "path_overlap",
        n_column="n_patients",
        unscored="invalid_*",
        primary=True,
    ),
    Headline(
        NAME,
        paths.rel.table("table1_expert"),
        "treatment match",
        "treatment_match",
        n_column="n_patients",
        unscored="invalid_*",
    ),
    Headline(
        NAME,
        paths.rel.table("meta_classifier"),
        "meta-classifier AUROC (all features, held-out model)",
        "auroc",
        (("held_out_model", "mean over models"), ("feature_set", "all")),
        n_column="n_test",
        per_unit=False,
    ),
)
_ROC_TABLE = "meta_classifier"
_CHOOSER_CASE = "labelled chooser case"

STUDY = Study(
    name=NAME,
    title="CancerGUIDE (guideline path tracing)",
    paths=paths,
    outputs=outputs(
        OUTPUTS,
        {
            "guideline_tree": {
                "caption": "The guideline tree the study traces paths in.",
                "unit": "none (the guideline itself)",
            },
            "table1_expert": {
                "caption": "Path overlap and treatment match against expert labels (Table 1).",
                "unit": str(RESAMPLING),
            },
            "consistency_accuracy": {
                "caption": "Accuracy against self-consistency.",
                "unit": "model (the mean row over models)",
            },
            "accuracy_by_consistency": {
                "caption": "Accuracy in bins of self-consistency.",
                "unit": "patient note (SE over the notes of a bin)",
            },
            "proxy_scores": {
                "caption": "Accuracy of the proxy labels per model.",
                "unit": "note the proxy labels (one note per patient)",
            },
            "proxy_agreement": {
                "caption": "Agreement between proxy rankings and expert rankings.",
                "unit": "model",
            },
            "meta_classifier": {
                "caption": "AUROC of the meta-classifier predicting correct traces.",
                "unit": "test row (per held-out model); model (the mean rows)",
            },
            "clustering": {
                "caption": "Clusters of model traces.",
                "unit": "model trace (F1: percentile bootstrap drawing whole patients, a "
                "statistic of the set)",
            },
            "error_analysis": {
                "caption": "Where traces leave the expert path.",
                "unit": "label error (one per patient and model; the pooled row by patient)",
            },
            "benchmark": {
                "caption": "Synthetic benchmark: predictions against the synthetic targets."
            },
            "compliance": {
                "caption": "Guideline-compliance cells (positive = NOT_GUIDELINE_COMPLIANT) per "
                "model and benchmark.",
                "unit": "none (counts and rates over rollouts)",
            },
            "annotators": {
                "caption": "Agreement between expert annotators beside model accuracy.",
                "unit": "none (means)",
            },
            "divergence_agreement": {
                "caption": "Divergence-point pairs: rollouts vs predictions against experts "
                "(Figure 6).",
                "unit": "none (correlations over divergence pairs)",
            },
            "judge_agreement": {
                "caption": "The synthetic chooser as a judge of which path fits a note: "
                "agreement with human labels of its cases and Cohen's κ.",
                "unit": _CHOOSER_CASE,
            },
            "judge_confusion": {
                "caption": "Chooser verdicts (target kept or not) against the human labels.",
                "unit": "none (counts)",
            },
            "judge_per_class": {
                "caption": "Chooser sensitivity and specificity per label (target / other).",
                "unit": _CHOOSER_CASE,
            },
            "scores": {
                "caption": "Per-patient scores of {name}: path overlap and treatment match of "
                "its rollouts (averaged within the note), self-consistency and the modal path "
                "and treatment."
            },
            "rollout_scores": {
                "caption": "Per-rollout scores of {name} on the expert-labelled notes: path "
                "overlap and treatment match of each rollout, with its unit (rollout) and "
                "cluster (patient note) ids."
            },
            "rollouts": {
                "caption": "Rollouts of {name}: one row per patient note and rollout with the "
                "path read, whether it is valid in the tree and why not."
            },
            "proxy": {
                "caption": "Proxy-benchmark accuracy of {name} per proxy and metric, with "
                "coverage and the confusion counts."
            },
            "accuracy_by_consistency_figure": {
                "caption": "Figure 3: accuracy (path overlap, treatment match) of the labelled "
                "notes by self-consistency bin per model: bars are bin means with standard "
                "errors, each labelled with its value and n notes.",
                "unit": "patient note (SE over the notes of a bin)",
            },
            "proxy_heatmap": {
                "caption": "Agreement of each proxy benchmark with the expert labels (Spearman "
                "correlation and RMSE of the model rankings, per accuracy metric), with each "
                "proxy's coverage; n/a where there are too few models or data.",
                "table": "proxy_agreement",
            },
            "roc_feature_sets": {
                "caption": "ROC of the meta-classifier per feature set, averaged over the "
                "held-out models on a common false-positive-rate grid; the legend lists every "
                "curve with its AUC, and dashes and staggered markers keep coinciding curves "
                "apart.",
                "table": _ROC_TABLE,
            },
            "divergence_pairs_figure": {
                "caption": "Figure 6: the divergence-point pairs most often seen in rollouts "
                "and in the expert labels per model, as shares of each model's pairs (bars "
                "labelled with share and count).",
                "table": "divergence_agreement",
            },
            # One ROC figure per feature set (roc_<feature set>).
            "roc": {
                "caption": "ROC of the meta-classifier on one feature set ({name}): one curve "
                "per held-out model and their mean on a common false-positive-rate grid; the "
                "legend lists every curve with its AUC.",
                "table": _ROC_TABLE,
            },
        },
    ),
    resampling=RESAMPLING,
    headlines=HEADLINES,
    # A path that was read but breaks the tree is parsed (and scored wrong); these read nothing.
    answers=Answers(
        "rollouts",
        "rollouts/{model}.tsv",
        ("patient_id", "note_set", "rollout"),
        "invalid_reason not in ('generation_error', 'no_answer', 'too_long')",
        reason="invalid_reason",
        value="path",
        score=ItemScore(paths.rel.scores("{model}"), "path_overlap", ("patient_id", "note_set")),
    ),
    item_folders=("rollouts", "rollout_scores", "proxy"),
    report_entries={"synthetic/benchmark": "tables"},
    # Columns that hold labels under a name the report's PHI rule reads as free text
    # (oncoeval.report.phi): a rollout's `answer` is its kind (path, not_compliant, none).
    label_columns=("answer",),
    # The exposure audit's items (oncoeval.exposure): each patient's note.
    exposure=ExposureSource(
        OUTPUTS_PREPARE["notes"], "patient_id", "note", "CancerGUIDE", "patient note"
    ),
    data_keys=data_keys,
    judge_roles=judge_roles,
    prompt_templates=prompt_templates,
    target_wildcards=target_wildcards,
    unused_outputs=unused_outputs,
    unit_scores=unit_scores,
    comparison_inputs=comparison_inputs,
)
