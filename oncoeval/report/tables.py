"""Study tables (TSV) rendered as HTML for the report, confidence intervals beside their value,
and the one place that says how every page and the terminal write a number.

A value column ``X`` with ``X_ci_low``/``X_ci_high`` (or a bare ``ci_low``/``ci_high`` pair,
which belongs to the numeric column just before it) becomes one column ``X [95% CI]`` showing
``0.410 [0.330, 0.490]``. The TSV on disk is untouched; machines keep reading it.

Numbers, alike on the landing page, the summary (page, Markdown, terminal), the study tables,
the item and compare pages and the run page: a mean or score to :data:`DIGITS` decimals with
its interval as ``value [low, high]`` (:func:`format_ci`); a count as a whole number, also when
its column reads back as floats (:func:`is_count_column`); a share of answers as a whole
percentage with its count, ``95% (38/40)`` (:func:`format_share`); money in US dollars to four
decimals, ``$0.0125`` (:func:`format_usd`); seconds to one decimal (:func:`format_seconds`).
"""

from __future__ import annotations

import html
import math

import pandas as pd

CI_SUFFIXES = ("_ci_low", "_ci_high")
# Decimals of a mean, a score or a rate, and of its interval's bounds.
DIGITS = 3
# Columns that hold counts besides ``n`` and ``n_*`` (confusion cells, ranks).
COUNT_COLUMNS = frozenset({"tp", "fp", "fn", "tn", "rank", "m", "requests", "failed", "cached"})


def is_count_column(name: str) -> bool:
    """Whether a column counts things (written as whole numbers, never ``6.000``)."""
    return name == "n" or name.startswith("n_") or name in COUNT_COLUMNS


def format_count(value) -> str:
    """A count as a whole number; a missing one as "–"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{int(value)}" if float(value).is_integer() else format_number(float(value))
    return str(value)


def format_share(share, n) -> str:
    """``95% (38/40)``: a share of ``n`` answers with its count; "–" when not known."""
    if share is None or n is None or pd.isna(share) or pd.isna(n):
        return "–"
    return f"{share:.0%} ({round(share * n)}/{int(n)})"


def format_usd(value) -> str:
    """``$0.0125``; no price known reads "not priced" (never $0)."""
    if value is None or pd.isna(value):
        return "not priced"
    return f"${value:.4f}"


def format_seconds(value) -> str:
    return "–" if value is None or pd.isna(value) else f"{value:.1f}"


def format_number(value, digits: int = DIGITS) -> str:
    """Numbers as a reader wants them: integers plain, floats to ``digits`` decimals, NaN as "–"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int) or (
        isinstance(value, float) and value.is_integer() and abs(value) >= 1000
    ):
        return f"{int(value)}"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def format_ci(value, low, high, digits: int = DIGITS) -> str:
    """``0.41 [0.33, 0.49]``; a missing interval shows the value alone."""
    # A value with an interval is a mean, even when a TSV column of 1s reads back as integers.
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    text = format_number(float(value) if numeric else value, digits)
    if pd.isna(low) or pd.isna(high):
        return text
    return f"{text} [{format_number(float(low), digits)}, {format_number(float(high), digits)}]"


def ci_pairs(columns: list[str]) -> dict[str, tuple[str, str]]:
    """Value column -> (low column, high column) for every interval the table carries."""
    pairs: dict[str, tuple[str, str]] = {}
    for i, col in enumerate(columns):
        if col.endswith("_ci_low"):
            base = col[: -len("_ci_low")]
            high = f"{base}_ci_high"
            if base in columns and high in columns:
                pairs[base] = (col, high)
        elif col == "ci_low" and "ci_high" in columns:
            previous = [c for c in columns[:i] if not c.endswith(CI_SUFFIXES)]
            if previous:
                pairs[previous[-1]] = ("ci_low", "ci_high")
    return pairs


def with_cis(df: pd.DataFrame, digits: int = DIGITS) -> pd.DataFrame:
    """A display copy of ``df``: each interval folded into its value column, numbers formatted."""
    pairs = ci_pairs(list(df.columns))
    level = "95% CI"
    shown = pd.DataFrame(index=df.index)
    folded = {c for pair in pairs.values() for c in pair}
    for col in df.columns:
        if col in folded:
            continue
        if col in pairs:
            low, high = pairs[col]
            shown[f"{col} [{level}]"] = [
                format_ci(v, lo, hi, digits)
                for v, lo, hi in zip(df[col], df[low], df[high], strict=True)
            ]
        elif pd.api.types.is_numeric_dtype(df[col]) and is_count_column(col):
            shown[col] = [format_count(v.item() if hasattr(v, "item") else v) for v in df[col]]
        elif pd.api.types.is_numeric_dtype(df[col]):
            shown[col] = [
                format_number(v.item() if hasattr(v, "item") else v, digits) for v in df[col]
            ]
        else:
            shown[col] = df[col].fillna("").astype(str)
    return shown


def table_html(df: pd.DataFrame, table_id: str = "table", max_rows: int = 2000) -> str:
    """The table as an HTML ``<table>`` (pandas Styler), intervals folded, at most ``max_rows``."""
    shown = with_cis(df.head(max_rows))
    # escape: cells hold model output, which must show as text, never run as HTML.
    styler = shown.style.format(escape="html").hide(axis="index")
    return wrap(styler, table_id)


def wrap(styler, table_id: str) -> str:
    """The Styler's table inside ``<div id=table_id>`` (the Styler gives the table its own id)."""
    table = styler.set_table_attributes('class="oncoeval-table"').to_html()
    return f'<div id="{html.escape(table_id)}">\n{table}</div>'


PAGE_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
table.oncoeval-table { border-collapse: collapse; font-size: 0.9em; }
table.oncoeval-table th, table.oncoeval-table td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
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
