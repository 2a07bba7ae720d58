"""Study tables (TSV) rendered as HTML for the report, confidence intervals beside their value,
and the one place that says how every page and the terminal write a number.

A value column ``X`` with ``X_ci_low``/``X_ci_high`` (or a bare ``ci_low``/``ci_high`` pair,
which belongs to the numeric column just before it) becomes one column ``X [95% CI]`` (its
header in words) showing
``0.410 [0.330, 0.490]``. The TSV on disk is untouched; machines keep reading it.

Numbers, missing values, booleans and headers are written alike on the landing page, the
summary (page, Markdown, terminal), the study tables, the item and compare pages and the run
page, by oncoeval.core.format (re-exported here).
"""

from __future__ import annotations

import html

import pandas as pd

# The one formatter of every surface (oncoeval.core.format); its names stay importable from here.
from ..core.format import (  # noqa: F401
    CI_SUFFIXES,
    COUNT_COLUMNS,
    DIGITS,
    MISSING,
    ci_pairs,
    column_label,
    format_ci,
    format_count,
    format_number,
    format_seconds,
    format_share,
    format_usd,
    is_count_column,
    n_text,
)
from ..core.format import display_frame as with_cis


def table_html(df: pd.DataFrame, table_id: str = "table", max_rows: int = 2000) -> str:
    """The table as an HTML ``<table>`` (pandas Styler), intervals folded, at most ``max_rows``."""
    shown = with_cis(df.head(max_rows))
    # escape: cells hold model output, which must show as text, never run as HTML.
    styler = shown.style.format(escape="html").hide(axis="index")
    return wrap(styler, table_id)


def wrap(styler, table_id: str) -> str:
    """The Styler's table inside ``<div id=table_id>`` (the Styler gives the table its own id)."""
    table = styler.set_table_attributes('class="oncoeval-table"').to_html()
    return f'<div id="{html.escape(table_id)}" class="oncoeval-scroll">\n{table}</div>'


PAGE_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
div.oncoeval-scroll { overflow-x: auto; }
table.oncoeval-table { border-collapse: collapse; font-size: 0.9em; width: 100%; }
table.oncoeval-table th, table.oncoeval-table td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; overflow-wrap: break-word; }
table.oncoeval-table td { max-width: 40em; }
details#more-columns { margin: 0.4em 0; }
table.oncoeval-table th { background: #eef2f7; position: sticky; top: 0; }
table.oncoeval-table tr:nth-child(even) td { background: #fafafa; }
p.caption { max-width: 60em; }
"""


def page(title: str, body: str, script: str = "") -> str:
    """A self-contained HTML page (the Snakemake report shows it in a frame)."""
    return (
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{PAGE_STYLE}</style></head>"
        f"<body><h2>{html.escape(title)}</h2>\n{body}\n{script}</body></html>\n"
    )


def tsv_page(
    tsv_path,
    title: str,
    caption: str,
    table_id: str = "table",
    study: str | None = None,
    include_text: bool = True,
) -> str:
    """The HTML page of one TSV table: title, caption, row count and the table; without
    ``include_text`` (a ``contains_phi`` study) its free-text cells are left out (report.phi)."""
    df = pd.read_csv(tsv_path, sep="\t")
    if not include_text:
        from .phi import leave_out_text

        df = leave_out_text(df, study)
    body = f"<p class='caption'>{html.escape(caption)} Rows: {len(df)}.</p>\n"
    body += table_html(df, table_id) if len(df) else "<p><em>No rows.</em></p>"
    return page(title, body)
