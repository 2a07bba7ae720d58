"""Plot helpers that keep figures honest: an empty panel says why, overlapping series stay
distinguishable, and legends sit beside the data, never on it."""

from __future__ import annotations

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


def save(fig, path) -> None:
    """Save with the legends beside the axes kept in the picture."""
    fig.savefig(path, dpi=120, bbox_inches="tight")
