"""Figures that cannot mislead: empty panels say so, identical series stay apart, legends beside
the data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.container import ErrorbarContainer
from matplotlib.lines import Line2D
from matplotlib.text import Annotation

from oncoeval import plotting as figures
from oncoeval.plotting import plt
from oncoeval.studies.cancer_myth import figures as cm_figures


def capture_saved(monkeypatch, module):
    """The texts of the figure a study's plot function saves (the figure itself, not the PNG)."""
    saved = {}

    def keep(fig, path):
        texts = [t for ax in fig.axes for t in ax.texts]
        saved["texts"] = [t.get_text() for t in texts if not isinstance(t, Annotation)]
        saved["labels"] = [t.get_text() for t in texts if isinstance(t, Annotation)]
        saved["ticks"] = [t.get_text() for ax in fig.axes for t in ax.get_xticklabels()]
        fig.savefig(path)

    monkeypatch.setattr(module, "save", keep)
    return saved


def test_cancer_myth_panel_without_scored_answers_says_so(monkeypatch, tmp_path):
    saved = capture_saved(monkeypatch, cm_figures)
    table = pd.DataFrame(
        {"model": ["smollm2"], "n": [0], "n_unscored": [5]}
        | {c: [float("nan")] for c in ("pcs", "pcs_ci_low", "pcs_ci_high", "pcr", "pcr_ci_low", "pcr_ci_high")}
    )  # fmt: skip
    cm_figures.overall_figure(table, tmp_path / "overall.png")
    assert saved["texts"] == ["no scored answers\n(n = 0, unscored = 5)"] * 2  # both panels
    assert (tmp_path / "overall.png").stat().st_size > 0


def test_cancer_myth_bars_name_their_n(monkeypatch, tmp_path):
    saved = capture_saved(monkeypatch, cm_figures)
    table = pd.DataFrame(
        {"model": ["a", "b"], "n": [8, 0], "n_unscored": [0, 8], "pcs": [0.5, float("nan")]}
        | {c: [0.4, float("nan")] for c in ("pcs_ci_low", "pcr", "pcr_ci_low")}
        | {c: [0.6, float("nan")] for c in ("pcs_ci_high", "pcr_ci_high")}
    )
    cm_figures.overall_figure(table, tmp_path / "overall.png")
    assert saved["texts"] == []  # a panel with scored answers has no "empty" note
    assert "b\nn=0, unscored=8" in saved["ticks"]


def test_legend_sits_beside_the_plot_area():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="a")
    ax.plot([0, 1], [1, 0], label="b")
    figures.legend_outside(ax)
    fig.canvas.draw()
    legend_box = ax.get_legend().get_window_extent()
    axes_box = ax.get_window_extent()
    assert legend_box.x0 > axes_box.x1  # entirely to the right of the data
    plt.close(fig)


def test_identical_series_get_different_markers_and_dashes():
    styles = [figures.series_style(k) for k in range(4)]
    assert len({s["marker"] for s in styles}) == 4
    assert len({s["linestyle"] for s in styles}) == 4
    # The first is a large hollow ring, the second a smaller filled marker inside it.
    assert styles[0]["markerfacecolor"] == "none" and styles[1]["markerfacecolor"] is None
    assert styles[0]["markersize"] > styles[1]["markersize"]


def test_note_empty_leaves_a_panel_with_data_alone():
    fig, ax = plt.subplots()
    assert figures.note_empty(ax, 3, 1) is False and len(ax.texts) == 0
    assert figures.note_empty(ax, 0, 4, "questions") is True
    assert ax.texts[0].get_text() == "no scored questions\n(n = 0, unscored = 4)"
    plt.close(fig)


# ---------------------------------------------------------------- every figure the studies write
def inspect_saved(monkeypatch, module, name):
    """Per panel of the figure a study saves: its notes, whether its legend lies outside the axes,
    the (marker, line style) of its marked lines and the positions of its bars."""
    panels = []

    def keep(fig, path):
        fig.canvas.draw()
        for ax in fig.axes:
            if ax.get_label() == "<colorbar>":
                continue
            legend = ax.get_legend()
            box = ax.get_window_extent()
            panels.append(
                {
                    # Notes on the panel; the value labels of bars and points apart.
                    "texts": [t.get_text() for t in ax.texts if not isinstance(t, Annotation)],
                    "labels": [t.get_text() for t in ax.texts if isinstance(t, Annotation)],
                    "legend_outside": None
                    if legend is None
                    else bool(legend.get_window_extent().x0 > box.x1),
                    "styles": [
                        (
                            line.get_marker(),
                            line.get_linestyle(),
                            line.get_markersize(),
                            line.get_linewidth(),
                        )
                        for line in legend_lines(ax)
                    ],
                    "bars": [(round(p.get_x(), 6), round(p.get_y(), 6)) for p in ax.patches],
                }
            )
        fig.savefig(path)

    monkeypatch.setattr(module, name, keep)
    return panels


def legend_lines(ax):
    """The lines behind the legend entries (an error bar's data line; bars are patches)."""
    for handle in ax.get_legend_handles_labels()[0]:
        if isinstance(handle, Line2D):
            yield handle
        elif isinstance(handle, ErrorbarContainer):
            yield handle[0]


def assert_series_apart(panel):
    """Two identical series: no two bars share a place, no two lines share marker and dashes."""
    assert len(panel["bars"]) == len(set(panel["bars"]))
    assert len(panel["styles"]) == len(set(panel["styles"]))
    assert panel["bars"] or panel["styles"]
    assert panel["legend_outside"] is True


def side_effect_scores(n_profiles):
    rows = [
        {"profile_id": f"p{i}", "variant": "specified", "regime": regime}
        | {"precision": 0.5 + 0.1 * (i % 2), "recall": 0.4 + 0.1 * (i % 3)}
        for i in range(n_profiles)
        for regime in ("ff", "grounded")
    ]
    return pd.DataFrame(rows, columns=["profile_id", "variant", "regime", "precision", "recall"])


def test_side_effect_precision_recall_empty_and_identical(monkeypatch, tmp_path):
    from oncoeval.stats.bootstrap import BootstrapSettings
    from oncoeval.studies.side_effects import aggregate as tables

    panels = inspect_saved(monkeypatch, tables, "save_figure")
    settings = BootstrapSettings(n_resamples=50)
    tables.plot_precision_recall({"m": side_effect_scores(0)}, settings, tmp_path / "a.png")
    assert panels.pop()["texts"] == ["no scored responses\n(n = 0, unscored = 0)"]
    same = side_effect_scores(4)
    tables.plot_precision_recall({"a": same, "b": same.copy()}, settings, tmp_path / "b.png")
    panel = panels.pop()
    assert panel["texts"] == [] and len(panel["styles"]) == 4  # 2 models x 2 regimes
    assert_series_apart(panel)


def test_side_effect_recall_strata_empty_and_identical(monkeypatch, tmp_path):
    from oncoeval.studies.side_effects import aggregate as tables

    panels = inspect_saved(monkeypatch, tables, "save_figure")
    columns = [*tables.ONSET_COLUMNS, *tables.FREQUENCY_COLUMNS]
    stats = [f"{c}{s}" for c in columns for s in ("", "_ci_low", "_ci_high")]
    empty = pd.DataFrame(columns=["model", "n_profiles", "n_unscored", *stats])
    tables.plot_recall_strata({"table6": empty, "table7": empty}, tmp_path / "a.png")
    assert [p["texts"] for p in panels] == [["no scored responses\n(n = 0, unscored = 0)"]] * 2
    panels.clear()
    row = {"n_profiles": 3, "n_unscored": 1} | {s: 0.5 for s in stats}
    same = pd.DataFrame([{"model": "a"} | row, {"model": "b"} | row])
    tables.plot_recall_strata({"table6": same, "table7": same}, tmp_path / "b.png")
    assert [p["texts"] for p in panels] == [[], []]
    assert_series_apart(panels[1])  # the legend sits beside the right panel
    assert len(panels[0]["bars"]) == len(set(panels[0]["bars"])) == 4


def test_coral_figure3_empty_and_identical(monkeypatch, tmp_path):
    from oncoeval.studies.coral import aggregate
    from oncoeval.studies.coral.tasks import SUBTYPES

    panels = inspect_saved(monkeypatch, aggregate, "save_figure")
    subtype = next(iter(SUBTYPES.values()))
    label = subtype.pair_label(subtype.fields[0])
    columns = ["view", "model", "label", "n_units", "n_unscored", "em_f1", "em_f1_ci_low"]
    empty = pd.DataFrame(
        [["published", "m", label, 0, 3, float("nan"), float("nan")]], columns=columns
    )
    empty["em_f1_ci_high"] = float("nan")
    aggregate.figure3(empty, "em_f1", tmp_path / "a.png", "empty")
    assert panels.pop()["texts"] == ["no scored units\n(n = 0, unscored = 3)"]
    row = {"view": "published", "label": label, "n_units": 5, "n_unscored": 0}
    row |= {"em_f1": 0.5, "em_f1_ci_low": 0.4, "em_f1_ci_high": 0.6}
    aggregate.figure3(
        pd.DataFrame([row | {"model": "a"}, row | {"model": "b"}]), "em_f1", tmp_path / "b.png", "t"
    )
    panel = panels.pop()
    assert panel["texts"] == [] and len(panel["bars"]) == 2
    assert_series_apart(panel)


def test_cancer_myth_category_and_generator_empty_and_identical(monkeypatch, tmp_path):
    panels = inspect_saved(monkeypatch, cm_figures, "save")
    columns = ["model", "category", "n", "n_unscored", "pcs", "pcs_ci_low", "pcs_ci_high"]
    cm_figures.category_figure(pd.DataFrame(columns=columns), tmp_path / "a.png")
    assert panels.pop()["texts"] == ["no scored answers\n(n = 0, unscored = 0)"]
    row = {
        "category": "c1",
        "n": 4,
        "n_unscored": 0,
        "pcs": 0.2,
        "pcs_ci_low": 0.0,
        "pcs_ci_high": 0.4,
    }
    cm_figures.category_figure(
        pd.DataFrame([row | {"model": "a"}, row | {"model": "b"}]), tmp_path / "b.png"
    )
    panel = panels.pop()
    assert panel["texts"] == [] and len(panel["bars"]) == 2
    assert_series_apart(panel)
    cm_figures.generator_figure(
        pd.DataFrame(columns=["generator", "responder", "pcs"]), tmp_path / "c.png"
    )
    assert panels.pop()["texts"] == ["no generator-tagged questions"]


def test_guidelines_accuracy_by_consistency_empty_and_identical(monkeypatch, tmp_path):
    from oncoeval.studies.guidelines import tables_consistency

    panels = inspect_saved(monkeypatch, tables_consistency, "save_figure")
    columns = ["model", "consistency", "accuracy_metric", "bin_centre", "n", "accuracy", "sem"]
    tables_consistency._plot_accuracy_by_consistency(
        pd.DataFrame(columns=columns), tmp_path / "a.png"
    )
    assert [p["texts"] for p in panels] == [["no scored labelled notes\n(n = 0)"]] * 2
    panels.clear()
    rows = [
        {"model": m, "consistency": cons, "accuracy_metric": acc, "bin_centre": c, "n": 3}
        | {"accuracy": 0.5, "sem": 0.1}
        for m in ("a", "b")
        for _, acc, cons in tables_consistency.PAIRS
        for c in (0.2, 0.6)
    ]
    tables_consistency._plot_accuracy_by_consistency(pd.DataFrame(rows), tmp_path / "b.png")
    assert [p["texts"] for p in panels] == [[], []]
    assert_series_apart(panels[1])
    assert len(panels[0]["bars"]) == len(set(panels[0]["bars"])) == 4


def test_guidelines_roc_figures_empty_and_identical(monkeypatch, tmp_path):
    from oncoeval.studies.guidelines import metaclf, tables_meta

    panels = inspect_saved(monkeypatch, tables_meta, "save_figure")
    tables_meta._plot_roc({}, "fs1", tmp_path / "a.png")
    tables_meta._plot_roc_sets({}, tmp_path / "b.png")
    assert [p["texts"][0].startswith(("needs >= 2", "no ROC curve")) for p in panels] == [True] * 2
    panels.clear()
    tpr = np.sqrt(metaclf.FPR_GRID)
    tables_meta._plot_roc({"a": tpr, "b": tpr.copy()}, "fs1", tmp_path / "c.png")
    tables_meta._plot_roc_sets({"fs1": {"a": tpr}, "fs2": {"a": tpr.copy()}}, tmp_path / "d.png")
    for panel in panels:
        assert panel["texts"] == []
        assert_series_apart(panel)


def test_guidelines_divergence_pairs_and_heatmap_empty_and_identical(monkeypatch, tmp_path):
    from oncoeval.studies.guidelines import tables_errors, tables_proxy

    panels = inspect_saved(monkeypatch, tables_errors, "save_figure")
    columns = ["model", "pair", "kept", "rollout_count", "label_count"]
    tables_errors._plot_divergence_pairs(pd.DataFrame(columns=columns), tmp_path / "a.png")
    assert panels.pop()["texts"] == ["no scored labelled notes\n(n = 0)"]
    same = pd.DataFrame(
        [
            {"model": "m", "pair": f"A->{x}", "kept": True, "rollout_count": 2, "label_count": 2}
            for x in "BC"
        ]
    )
    tables_errors._plot_divergence_pairs(same, tmp_path / "b.png")
    panel = panels.pop()
    assert panel["texts"] == [] and len(panel["bars"]) == 4  # rollouts beside label bars
    assert_series_apart(panel)
    agree = pd.DataFrame(columns=["proxy", "metric", "spearman", "rmse", "coverage"])
    heatmaps = inspect_saved(monkeypatch, tables_proxy, "save_figure")
    tables_proxy._plot_heatmap(agree, tmp_path / "c.png")
    assert set(heatmaps.pop()["texts"]) == {"n/a"}  # every cell says it has no value


def test_every_bar_reads_its_value_and_n_a_zero_as_zero_and_no_data_as_such():
    fig, ax = plt.subplots()
    values = [0.42, 0.0, float("nan")]
    bars = ax.bar(["a", "b", "c"], np.nan_to_num(values))
    figures.label_bars(ax, bars, values, [30, 12, 0])
    assert [t.get_text() for t in ax.texts] == ["0.42 (n=30)", "0.00 (n=12)", "no data (n=0)"]
    assert all(isinstance(t, Annotation) for t in ax.texts)
    # The zero keeps a visible stub at 0; the missing value draws nothing.
    (stub,) = ax.lines
    assert list(stub.get_ydata()) == [0, 0]
    plt.close(fig)


def test_coral_pair_without_data_reads_no_data_not_zero(monkeypatch, tmp_path):
    from oncoeval.studies.coral import aggregate
    from oncoeval.studies.coral.tasks import SUBTYPES

    panels = inspect_saved(monkeypatch, aggregate, "save_figure")
    labels = [s.pair_label(f) for s in SUBTYPES.values() for f in s.fields][:2]
    nan = float("nan")
    by_field = pd.DataFrame(
        {
            "view": ["published"] * 2, "model": ["m"] * 2, "label": labels, "n_units": [5, 0],
            "n_unscored": [0, 0], "em_f1": [0.0, nan], "em_f1_ci_low": [0.0, nan],
            "em_f1_ci_high": [0.0, nan],
        }
    )  # fmt: skip
    aggregate.figure3(by_field, "em_f1", tmp_path / "f.png", "t")
    assert panels.pop()["labels"] == ["0.00 (n=5)", "no data (n=0)"]


def test_bar_labels_sit_beyond_the_error_bar_and_never_overprint(tmp_path):
    """Eight narrow bars side by side: their labels would overprint each other, so saving
    turns them upright; each sits above its bar's error bar, not on it."""
    fig, ax = plt.subplots(figsize=(2.5, 3))
    values = [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.0, float("nan")]
    bars = ax.bar(range(8), np.nan_to_num(values), yerr=0.1, width=0.9)
    figures.label_bars(ax, bars, values, [11, 5, 120, 3, 9, 10, 4, 0])
    assert figures.overlapping_labels(fig), "the example must crowd its labels"
    figures.save(fig, tmp_path / "bars.png")
    assert figures.overlapping_labels(fig) == []
    first = next(t for t in ax.texts if t.get_text() == "0.50 (n=11)")
    assert first.xy[1] == pytest.approx(0.6)  # the top of its error bar, 0.5 + 0.1
    assert first.get_rotation() == 90
    plt.close(fig)
