"""The aggregate stage of the study: every table and figure that combines models, in dependency
order. Each table family has its module (tables_expert, tables_consistency, tables_proxy,
tables_meta, tables_errors); each function reads per-model files or the tables before it, writes
one table (TSV + Markdown) and, where the paper has one, a figure, and hands the next ones what
it wrote as written (``oncoeval.core.io.as_written``), never a file to read back. A part that needs
more models than the run has writes a row saying so instead of failing.
"""

from __future__ import annotations

import pandas as pd

from ...core.io import read_jsonl
from .parse import read_rollouts
from .score import read_scores
from .tables_consistency import consistency_accuracy, cross_model
from .tables_errors import error_analysis
from .tables_expert import annotator_table, table1_expert
from .tables_meta import clustering, meta_classifier, settings_from
from .tables_proxy import proxy_agreement


def load_scores(paths: dict[str, str]) -> pd.DataFrame:
    frames = [read_scores(p, m) for m, p in paths.items()]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def aggregate(
    notes_path, score_paths: dict, rollout_paths: dict, proxy_paths: list, block, boot, out
):
    """Every table and figure of the study, in dependency order (workflow.OUTPUTS_AGGREGATE
    names the outputs in ``out``; ``out["roc"]``: one figure per feature set).

    ``score_paths`` and ``rollout_paths``: model -> file; ``block``: the filled study block.
    """
    scores = load_scores(score_paths)
    rollouts = {m: read_rollouts(p) for m, p in rollout_paths.items()}
    cons = block["consistency"]
    cross_features, cross_scores = cross_model(
        scores,
        rollouts,
        pool=cons["pool"],
        min_agree=int(cons["min_agree"]),
        delta=float(cons["delta"]),
        boot=boot,
        out={
            "labels": out["cross_labels"],
            "features": out["cross_features"],
            "scores": out["cross_scores"],
        },
    )
    expert = table1_expert(scores, rollouts, boot, out["table1_expert"], out["table1_expert_md"])
    annotator_table(read_jsonl(notes_path), rollouts, out["annotators"], out["annotators_md"])
    consistency_accuracy(
        scores,
        boot,
        int(block["accuracy_bins"]),
        out["consistency_accuracy"],
        out["consistency_accuracy_md"],
        out["accuracy_by_consistency"],
        out["accuracy_by_consistency_md"],
        out["accuracy_by_consistency_figure"],
    )
    proxy_scores = proxy_agreement(
        list(proxy_paths),
        cross_scores,
        expert,
        boot,
        {
            "scores": out["proxy_scores"],
            "scores_md": out["proxy_scores_md"],
            "agreement": out["proxy_agreement"],
            "agreement_md": out["proxy_agreement_md"],
            "compliance": out["compliance"],
            "compliance_md": out["compliance_md"],
            "heatmap": out["proxy_heatmap"],
        },
    )
    sets = list(block["meta_classifier"]["feature_sets"])
    figures = dict(zip(sets, out["roc"], strict=True))
    figures["feature_sets"] = out["roc_feature_sets"]
    _, meta_rows = meta_classifier(
        scores,
        cross_features,
        proxy_scores,
        settings_from(block),
        sets,
        boot,
        {
            "table": out["meta_classifier"],
            "table_md": out["meta_classifier_md"],
            "predictions": out["meta_predictions"],
            "rows": out["meta_rows"],
        },
        figures,
    )
    clustering(
        meta_rows,
        int(block["meta_classifier"]["seed"]),
        boot,
        out["clustering"],
        out["clustering_md"],
    )
    _error_analysis(scores, rollouts, block, boot, out)


def _error_analysis(scores, rollouts, block, boot, out) -> None:
    """Where models' paths part from the experts' (the study's error analysis outputs)."""
    error_analysis(
        scores,
        rollouts,
        int(block["error_top_n"]),
        boot,
        {
            "table": out["error_analysis"],
            "table_md": out["error_analysis_md"],
            "points": out["divergence_points"],
            "pairs": out["divergence_pairs"],
            "pair_agreement": out["divergence_agreement"],
            "pair_agreement_md": out["divergence_agreement_md"],
            "pair_figure": out["divergence_pairs_figure"],
        },
        gamma=int(block["error_gamma"]),
    )
