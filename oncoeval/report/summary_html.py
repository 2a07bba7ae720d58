"""The summary page: results/summary.{tsv,md,html}, the usage table and the report's landing
fragment, from the rows of :mod:`.summary`."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from ..core import layout
from ..core.layout import ResultPaths
from . import catalog, landing, tables
from .summary import (
    SCOPE_COLUMN,
    SUMMARY_NOTE,
    display_frame,
    leaders_frame,
    leaders_shown,
    summary_frames,
    usage_display,
)


def _styled(df: pd.DataFrame, table_id: str, links=()) -> str:
    """The table, HTML-escaped but for the ``links`` columns (anchors built here)."""
    styler = df.style.format(escape="html").hide(axis="index")
    for column in links:
        styler = styler.format(lambda v: v, subset=[column])
    return tables.wrap(styler, table_id)


def item_links(pages) -> dict[tuple[str, str], str]:
    """(study, model) -> its item page, relative to results/ (where summary.html and the
    report sit), from the pages' paths ``results/report/{study}/drilldown/{model}.html``."""
    out = {}
    for page in pages:
        parts = Path(page).parts
        if len(parts) == 5 and parts[3] == "drilldown":
            out[(parts[2], Path(page).stem)] = str(Path(*parts[1:]))
    return out


def _markdown(shown: pd.DataFrame) -> str:
    """A display frame (cells already text) as Markdown; numbers are not re-read as floats."""
    return shown.to_markdown(index=False, disable_numparse=True)


LEADERS_TITLE = "Which model leads, and where the others stand"
LEADERS_NOTE = (
    "Which model leads each headline measure, and where each other model stands against it: "
    "behind the leader (the leader's advantage is significant: its difference interval "
    "excludes 0 after the Bonferroni adjustment over every pair of models on the study's "
    "primary measure), equivalent within the measure's margin (the interval lies inside it), "
    "or not separable at this n (neither); measures marked descriptive are not adjusted and "
    f"are not verdicts ({ResultPaths('{study}').table(layout.LEADERBOARD)}). Detectable "
    "difference: the true difference the decision made finds with 80% power at its n, or "
    "that no difference "
    "can be significant (docs/comparisons.md)."
)


def fragment_html(
    headline: pd.DataFrame,
    usage: pd.DataFrame,
    leaders: pd.DataFrame | None = None,
    item_pages=(),
) -> str:
    """The summary as an HTML fragment: who leads (and where the others stand), one table
    per study (each model linked to its item page, and to the compare page where there is one),
    then the usage table."""
    links = item_links(item_pages)
    parts = []
    if leaders is not None and len(leaders):
        parts.append(f"<h3>{LEADERS_TITLE}</h3>")
        parts.append(f"<p class='caption'>{html.escape(LEADERS_NOTE)}</p>")
        parts.append(_styled(leaders_shown(leaders), "summary-leaders"))
    shown = display_frame(headline)
    shown["items"] = [
        _items_cell(links, s, m) for s, m in zip(headline["study"], headline["model"], strict=True)
    ]
    for study in dict.fromkeys(headline["study"]):
        block = shown[(headline["study"] == study).to_numpy()].drop(columns="study")
        title = catalog.STUDY_TITLES.get(study, study).split(" ", 1)[-1]
        parts.append(f"<h3>{html.escape(title)}</h3>")
        parts.append(_styled(block, f"summary-{study}", links=["items"]))
    parts.append("<h3>Models: calls, tokens, cost and wall time</h3>")
    parts.append(_styled(usage_display(usage), "summary-usage"))
    return "\n".join(parts)


def _items_cell(links: dict, study: str, model: str) -> str:
    """Links to the model's item page and, where there is one, the study's compare page."""
    if (study, model) not in links:
        return ""
    cell = _anchor(links[(study, model)], "answers")
    if (study, "compare") in links:
        cell += " · " + _anchor(links[(study, "compare")], "side by side")
    return cell


def _anchor(href: str, text: str) -> str:
    return f"<a href='{html.escape(href, quote=True)}'>{html.escape(text)}</a>"


def write_summary(root, out: dict, studies, *, models=None, replayed=(), item_pages=(), scope=""):
    """Write results/summary.{tsv,md,html}, the usage table and the report's landing fragment
    (``out``: the rule's named outputs ``tsv``, ``md``, ``html``, ``fragment``, ``usage``);
    ``replayed`` ids are named in the note as stored answers, not models; each model's row
    links to its ``item_pages``; ``scope`` is the sentence of a capped or subset run
    (:func:`catalog.run_scope`)."""
    headline, usage = summary_frames(Path(root), studies, models)
    headline[SCOPE_COLUMN] = scope
    leaders = leaders_frame(Path(root), studies)
    headline.to_csv(out["tsv"], sep="\t", index=False, float_format="%.6g")
    usage.to_csv(out["usage"], sep="\t", index=False, float_format="%.6g")
    body = fragment_html(headline, usage, leaders, item_pages)
    Path(out["fragment"]).write_text(
        landing.landing_html(headline, Path(root) / layout.RESULTS, replayed, scope),
        encoding="utf-8",
    )
    note = SUMMARY_NOTE + catalog.stored_answers_note(replayed)
    scope_html = f"<p class='caption'><strong>{html.escape(scope)}</strong></p>\n" if scope else ""
    Path(out["html"]).write_text(
        tables.page("OncoEval summary", f"{scope_html}<p class='caption'>{note}</p>\n{body}"),
        encoding="utf-8",
    )
    md = ["# OncoEval summary", ""] + ([f"**{scope}**", ""] if scope else []) + [note, ""]
    if len(leaders):
        md += [f"## {LEADERS_TITLE}", "", LEADERS_NOTE, ""]
        md += [_markdown(leaders_shown(leaders)), "", "## Headline results per model", ""]
    md.append(_markdown(display_frame(headline)))
    md += ["", "## Models", "", _markdown(usage_display(usage)), ""]
    Path(out["md"]).write_text("\n".join(md), encoding="utf-8")
    return headline, usage
