"""Plotting for the whole package: the one place the matplotlib backend is chosen, and the
helpers that keep figures honest.

Every figure is drawn through ``plt`` from this module (``from oncoeval.plotting import plt``):
the backend is set to Agg once, here, before pyplot is imported, so figures are written on a
machine without a display and no other module calls ``matplotlib.use``. It sits below the
studies and the report (CONTRIBUTING: the floors) and imports nothing of the package.

The helpers: an empty panel says why, overlapping series stay distinguishable, legends sit
beside the data, never on it, and every bar carries its value and n (a zero drawn as a zero, a
missing value written "no data") above its error bar; bar labels that would overprint each
other are turned upright when the figure is saved (:func:`save`)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

# pyplot must be imported after the backend is chosen: the package's one import of it.
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["plt"]

MARKERS = ("o", "s", "^", "D", "v", "P", "X")
LINESTYLES = ("-", "--", ":", "-.")


def series_style(k: int) -> dict:
    """Marker, line style and marker size of the k-th series: two identical series still show
    as two (a larger hollow marker around a smaller filled one, different dashes)."""
    return {
        "marker": MARKERS[k % len(MARKERS)],
        "linestyle": LINESTYLES[k % len(LINESTYLES)],
        "markersize": max(4, 10 - 2 * (k % 4)),
        "markerfacecolor": "none" if k % 2 == 0 else None,
    }


def legend_outside(ax, **kwargs) -> bool:
    """The axes' legend to the right of the plot area; False when nothing is labelled."""
    if not ax.get_legend_handles_labels()[0]:
        return False
    options = {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0), "borderaxespad": 0.0}
    ax.legend(**{**options, "fontsize": 7, "frameon": False, **kwargs})
    return True


def note_empty(ax, n_scored: int, n_unscored: int | None, what: str = "items") -> bool:
    """Write "no scored items (n = 0, unscored = k)" on a panel without data; True if empty.

    ``n_unscored`` None: the plotting code cannot know it (the note then says only n = 0)."""
    if n_scored:
        return False
    counts = "n = 0" if n_unscored is None else f"n = 0, unscored = {n_unscored}"
    ax.text(
        0.5,
        0.5,
        f"no scored {what}\n({counts})",
        transform=ax.transAxes,
        ha="center",
        va="center",
        fontsize=10,
        color="dimgrey",
    )
    return True


def value_label(value, n=None, digits: int = 2) -> str:
    """``0.42 (n=30)``; a missing value reads "no data" (never a zero)."""
    if value is None or value != value:  # NaN
        return "no data" if n is None else f"no data (n={n})"
    return f"{value:.{digits}f}" + ("" if n is None else f" (n={n})")


# The gid of a bar's value label (found again by :func:`save`).
BAR_LABEL = "oncoeval-bar-label"


def _whisker_ends(bars, horizontal: bool) -> list:
    """Per bar, the far end of its error bar (None without one), so a label sits beyond it."""
    errorbar = getattr(bars, "errorbar", None)
    if errorbar is None or len(errorbar.lines) < 3 or not errorbar.lines[2]:
        return [None] * len(bars)
    segments = errorbar.lines[2][0].get_segments()
    axis = 0 if horizontal else 1
    ends = [max(point[axis] for point in seg) if len(seg) else None for seg in segments]
    return ends if len(ends) == len(bars) else [None] * len(bars)


def label_bars(ax, bars, values, ns=None, horizontal: bool = False, fontsize: int = 7) -> None:
    """Write each bar's value and n beyond its end (and its error bar); a zero keeps a visible
    stub and reads "0.00", a missing value draws no bar and reads "no data", so neither can
    pass for the other."""
    ns = list(ns) if ns is not None else [None] * len(values)
    ends = _whisker_ends(bars, horizontal)
    for bar, value, n, end in zip(bars, values, ns, ends, strict=True):
        missing = value is None or value != value
        text = value_label(None if missing else float(value), None if n is None else int(n))
        reach = None if missing or end is None or end != end else max(float(value), end)
        if horizontal:
            y = bar.get_y() + bar.get_height() / 2
            x = 0.0 if missing else float(value)
            if not missing and x == 0:
                ax.plot([0, 0], [bar.get_y(), bar.get_y() + bar.get_height()], color="black", lw=2)
            ax.annotate(
                text, (max(reach if reach is not None else x, 0.0), y), xytext=(3, 0),
                textcoords="offset points", ha="left", va="center", fontsize=fontsize,
                gid=BAR_LABEL,
            )  # fmt: skip
        else:
            x = bar.get_x() + bar.get_width() / 2
            y = 0.0 if missing else float(value)
            if not missing and y == 0:
                ax.plot([bar.get_x(), bar.get_x() + bar.get_width()], [0, 0], color="black", lw=2)
            at = reach if reach is not None and y >= 0 else y
            ax.annotate(
                text, (x, at), xytext=(0, 3 if y >= 0 else -3), textcoords="offset points",
                ha="center", va="bottom" if y >= 0 else "top", fontsize=fontsize, gid=BAR_LABEL,
            )  # fmt: skip


def overlapping_labels(fig) -> list[tuple[str, str]]:
    """Pairs of bar labels (:func:`label_bars`) whose drawn boxes overlap, per axes."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    pairs = []
    for ax in fig.axes:
        labels = [t for t in ax.texts if t.get_gid() == BAR_LABEL and t.get_text()]
        boxes = [t.get_window_extent(renderer) for t in labels]
        for i, a in enumerate(boxes):
            for j in range(i + 1, len(boxes)):
                if a.overlaps(boxes[j]):
                    pairs.append((labels[i].get_text(), labels[j].get_text()))
    return pairs


def _upright_crowded_labels(fig) -> None:
    """Turn the bar labels of an axes upright (reading upwards) where two overprint."""
    if not overlapping_labels(fig):
        return
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        labels = [t for t in ax.texts if t.get_gid() == BAR_LABEL]
        boxes = [t.get_window_extent(renderer) for t in labels]
        if any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :]):
            for t in labels:
                if t.get_ha() == "center":  # a vertical bar's label
                    t.set_rotation(90)
                    t.set_va("bottom" if t.get_va() == "bottom" else "top")


def save(fig, path) -> None:
    """Save with the legends beside the axes kept in the picture and no bar labels
    overprinting each other."""
    _upright_crowded_labels(fig)
    fig.savefig(path, dpi=120, bbox_inches="tight")
