"""Figures that cannot mislead: empty panels say so, identical series stay apart, legends beside
the data."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from oncoeval.report import figures  # noqa: E402
from oncoeval.studies.cancer_myth import figures as cm_figures  # noqa: E402


def capture_saved(monkeypatch, module):
    """The texts of the figure a study's plot function saves (the figure itself, not the PNG)."""
    saved = {}

    def keep(fig, path):
        saved["texts"] = [t.get_text() for ax in fig.axes for t in ax.texts]
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
