"""The report's first screen: the answer, in one compact table.

Per enabled study its first declared headline measure (``Study.headlines``), and per evaluated model
its value with the 95% CI, n, its standing against the leader (leader, behind, equivalent
within the margin, or not separable at this n), and what a reader must know before quoting it
(warnings). The table comes first, so that it fits the first screen of a 1366x768 window; below
it the criteria of the standings and links into each study and to the full summary. Standings
come from the study's ``tables/leaderboard.tsv`` when the workflow wrote one; without it the
highest value is marked as the best and nothing is tested.

The fragment is the Snakemake report's landing text (``report/workflow.rst``). Its style sheet
makes that landing start at the top left of the content area and use its full width (Snakemake
centres the landing text in a fixed-height box, which puts the top of a tall one out of reach).
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import pandas as pd

from ..core import layout
from ..core.layout import ResultPaths
from ..studies import STUDIES
from . import catalog, tables

LANDING_ID = "oncoeval-landing"
TABLE_ID = "oncoeval-headlines"
LEADERBOARD = layout.IN_STUDY.table(layout.LEADERBOARD)
MODEL_CALLS = layout.IN_STUDY.table(layout.MODEL_CALLS)
# Snakemake's landing: content box `grow flex items-center justify-center h-screen
# overflow-auto`, text column `prose max-w-lg` beside the rule graph. Scoped with :has() to the
# box that holds this fragment, so the report's other views keep their layout.
LANDING_STYLE = f"""
div.h-screen.overflow-auto:has(#{LANDING_ID}) {{ align-items: flex-start;
  justify-content: flex-start; }}
div.grow.flex.gap-3:has(#{LANDING_ID}) {{ flex-direction: column; min-width: 0; }}
div.prose:has(#{LANDING_ID}) {{ max-width: none; }}
#{LANDING_ID} {{ font-size: 0.85rem; line-height: 1.25; color: #1e293b; }}
#{LANDING_ID} h2 {{ font-size: 1.15rem; margin: 0 0 0.3em 0; }}
#{LANDING_ID} p {{ margin: 0.3em 0; max-width: 70em; }}
#{LANDING_ID} p.scope {{ color: #9a3412; font-weight: 600; }}
#{LANDING_ID} p.criteria {{ color: #475569; }}
#{LANDING_ID} table {{ border-collapse: collapse; margin: 0.3em 0; width: auto;
  max-width: 100%; }}
#{LANDING_ID} th, #{LANDING_ID} td {{ border: 1px solid #cbd5e1; padding: 1px 6px;
  text-align: left; vertical-align: top; }}
#{LANDING_ID} thead th {{ background: #eef2f7; white-space: nowrap; }}
#{LANDING_ID} th.study {{ background: #f8fafc; font-weight: 600; }}
#{LANDING_ID} td.warn {{ min-width: 12em; color: #9a3412; }}
#{LANDING_ID} td.model {{ min-width: 12em; overflow-wrap: anywhere; }}
#{LANDING_ID} td.num, #{LANDING_ID} td.name {{ white-space: nowrap; font-variant-numeric: tabular-nums; }}
#{LANDING_ID} td.count {{ min-width: 5.5em; font-variant-numeric: tabular-nums; }}
#{LANDING_ID} a {{ color: #047857; }}
"""
# The standing of the highest value when no leaderboard tested ties (explained under the table).
UNTESTED_BEST = "best*"
# Model ids longer than this wrap in the landing table ("side-effects-reference-replay" is 29).
LONG_MODEL_ID = 32
COLUMNS = ["model", "standing", "value [95% CI]", "n", "warnings"]


def study_title(study: str) -> str:
    """The study's report title without the category's ordering number."""
    return catalog.STUDY_TITLES.get(study, study).split(" ", 1)[-1]


def short_title(study: str) -> str:
    """The study's title without its explanation in brackets: "Cancer-Myth"."""
    return study_title(study).split(" (", 1)[0]


def read_tsv(path: Path) -> pd.DataFrame | None:
    return pd.read_csv(path, sep="\t") if path.exists() else None


def short_standing(standing: str) -> str:
    """A standing as the first screen's narrow column shows it ("not separable at this n",
    "behind", "equivalent within ±0.05"); the caption under the table gives the criteria."""
    for long, short in (
        (" from the leader", ""),
        (" to the leader", ""),
        ("behind the leader", "behind"),
    ):
        standing = standing.replace(long, short)
    return standing


def standings(rows: pd.DataFrame, leaderboard: pd.DataFrame | None, measure: str) -> dict:
    """model -> its standing for one measure's rows: "leader", "behind the leader",
    "equivalent to the leader within ±delta" or "not separable from the leader at this n".

    From the study's leaderboard (oncoeval.stats.compare: its ``standing`` column, the verdict of
    each model's comparison with the leader) when it ranks this measure, else the highest
    value is marked :data:`UNTESTED_BEST` (nothing tested).
    """
    if leaderboard is not None and {"measure", "model", "standing"} <= set(leaderboard.columns):
        ranked = leaderboard[leaderboard["measure"] == measure]
        if len(ranked):
            return {
                m: "" if pd.isna(s) else str(s)
                for m, s in zip(ranked["model"], ranked["standing"], strict=True)
            }
    values = pd.to_numeric(rows["value"], errors="coerce")
    if values.notna().any():
        best = values.max()
        return {
            m: UNTESTED_BEST if v == best else ""
            for m, v in zip(rows["model"], values, strict=True)
        }
    return {}


def call_counts(calls: pd.DataFrame | None, model: str) -> dict:
    """Requests, failed calls and answers cut at the token cap of one model in one study."""
    if calls is None or "model" not in calls.columns:
        return {}
    mine = calls[calls["model"] == model]
    return {
        key: int(mine[col].sum())
        for key, col in (("requests", "n_requests"), ("failed", "n_failed"), ("cut", "n_truncated"))
        if col in mine.columns
    }


def _count(value) -> int | None:
    number = pd.to_numeric(value, errors="coerce")
    return None if pd.isna(number) else int(number)


def warnings_for(row: pd.Series, counts: dict, replayed) -> list[str]:
    """What a reader must know before quoting one model's headline in one study: the summary's
    own warnings (most answers cut or unparsed), then no value, unscored units, failed calls,
    answers cut at the token cap (when the summary does not count them), stored answers."""
    out = []
    flagged = row.get("warnings")
    if isinstance(flagged, str) and flagged:
        out.append(flagged)
    value = pd.to_numeric(row.get("value"), errors="coerce")
    if pd.isna(value):
        text = row.get("value")
        out.append(f"no value: {text}" if isinstance(text, str) and text else "no value")
    n, unscored = _count(row.get("n")), _count(row.get("n_unscored"))
    if unscored:
        total = f" of {n + unscored}" if n is not None else ""
        out.append(f"{unscored}{total} unscored")
    requests = counts.get("requests") or 0
    if counts.get("failed"):
        out.append(f"{counts['failed']} of {requests} calls failed")
    if counts.get("cut") and pd.isna(row.get("cut_share", float("nan"))):
        out.append(f"{counts['cut']} of {requests} answers cut at the token cap")
    if row.get("model") in replayed:
        out.append("replayed stored answers, not a model")
    return out


def landing_frame(summary: pd.DataFrame, results: Path, replayed=()) -> pd.DataFrame:
    """One row per (study, model) for each study's first headline measure, in registry order."""
    results = Path(results)
    frames = []
    for study in (s for s in STUDIES if s in set(summary["study"])):
        rows = summary[summary["study"] == study]
        measure = rows["measure"].iloc[0]
        rows = rows[rows["measure"] == measure]
        standing = standings(rows, read_tsv(results / study / LEADERBOARD), measure)
        calls = read_tsv(results / study / MODEL_CALLS)
        for _, r in rows.iterrows():
            frames.append(
                {
                    "study": study,
                    "measure": measure,
                    "model": r["model"],
                    "standing": standing.get(r["model"], ""),
                    "value [95% CI]": tables.format_ci(
                        _number(r.get("value")), r.get("ci_low"), r.get("ci_high")
                    ),
                    "n": tables.n_text(
                        _count(r.get("n")), r.get("n_clusters"), _text(r.get("unit"))
                    ),
                    "warnings": "; ".join(
                        warnings_for(r, call_counts(calls, r["model"]), replayed)
                    ),
                }
            )
    return pd.DataFrame(frames, columns=["study", "measure", *COLUMNS])


def _text(value) -> str:
    return value if isinstance(value, str) else ""


def _number(value):
    number = pd.to_numeric(value, errors="coerce")
    return value if pd.isna(number) else float(number)


def open_entry_js(path: str) -> str:
    """An onclick that shows a report entry in Snakemake's report (``app`` and ``results`` are
    the report page's globals); the link's href is the entry's file, for a browser without it."""
    target = json.dumps(path)
    return (
        f"if (typeof app === 'object' && typeof results === 'object' && results[{target}]) {{ app.setView({{content: "
        f"'html', contentPath: results[{target}].data_uri, resultPath: {target}}}); "
        "return false; }"
    )


def show_category_js(category: str) -> str:
    target = json.dumps(category)
    return (
        f"if (typeof app === 'object' && typeof categories === 'object' && categories[{target}]) "
        f"{{ app.showCategory({target}); return false; }}"
    )


def _link(text: str, href: str, onclick: str) -> str:
    return f'<a href="{html.escape(href)}" onclick="{html.escape(onclick)}">{html.escape(text)}</a>'


def _relative(path: str) -> str:
    """A results/... path as a link from results/report.html."""
    return path.removeprefix(layout.results(""))


def headline_entry(study: str) -> str | None:
    """The report entry of the table the study's first headline is read from."""
    declared = catalog.STUDY_DECLARATIONS.get(study)
    headlines = declared.headlines if declared else ()
    if not headlines:
        return None
    return catalog.Entry(study, ResultPaths(study)(headlines[0].table)).html_path


def _model_cell(model: str) -> str:
    """A model id on one line, unless it is longer than most (then it wraps, rather than
    pushing the table wider than a small laptop's screen)."""
    kind = "model" if len(model) > LONG_MODEL_ID else "name"
    return f"<td class='{kind}'>{html.escape(model)}</td>"


def table_html(frame: pd.DataFrame) -> str:
    """The landing table: per study a row naming it and its headline measure, then one row per
    model. The study and the measure head their rows instead of filling two columns beside
    them, so that the table fits a small laptop's first screen without wrapping its cells."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in COLUMNS)
    body = []
    for study, rows in frame.groupby("study", sort=False):
        category = catalog.STUDY_TITLES.get(study, study)
        title = _link(short_title(study), "report.html", show_category_js(category))
        measure_name = rows["measure"].iloc[0]
        entry = headline_entry(study)
        measure = html.escape(measure_name)
        if entry:
            measure = _link(measure_name, _relative(entry), open_entry_js(entry))
        body.append(
            f'<tr><th class="study" colspan="{len(COLUMNS)}" scope="rowgroup">'
            f"{title} · {measure}</th></tr>"
        )
        for _, r in rows.iterrows():
            cells = [
                _model_cell(str(r["model"])),
                f"<td class='name'>{html.escape(short_standing(r['standing']))}</td>",
                f"<td class='num'>{html.escape(r['value [95% CI]'])}</td>",
                f"<td class='count'>{html.escape(r['n'])}</td>",
                f"<td class='warn'>{html.escape(r['warnings'])}</td>",
            ]
            body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<table id="{TABLE_ID}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


CRITERIA = (
    "Per study its first headline measure (its primary measure) and per evaluated model its "
    "value with the 95% CI over whole clusters and the number of scored units (n, in the "
    "study's unit); the other headlines, usage and cost are in the full summary. Standing "
    "against the leader: behind when the leader's advantage is significant (its difference "
    "interval excludes 0 after the Bonferroni adjustment over every pair of models); "
    "equivalent within ±margin when that interval lies inside the margin; else not separable "
    "at this n. Warnings: what to know before quoting a value (answers cut or unparsed, "
    "unscored units, failed calls, stored answers replayed)."
)


def landing_html(summary: pd.DataFrame, results: Path, replayed=(), scope: str = "") -> str:
    """The landing fragment: the scope of a capped or subset run, the table, the links."""
    frame = landing_frame(summary, results, replayed)
    parts = [f"<style>{LANDING_STYLE}</style>", f'<div id="{LANDING_ID}">']
    parts.append("<h2>OncoEval: headline results</h2>")
    if scope:
        parts.append(f"<p class='scope'>{html.escape(scope)}</p>")
    parts.append(table_html(frame) if len(frame) else "<p><em>No headline results.</em></p>")
    # The criteria go under the table, so that the table starts at the top of the first screen.
    parts.append(f"<p class='criteria'>{html.escape(CRITERIA)}</p>")
    if (frame["standing"] == UNTESTED_BEST).any():
        parts.append(
            f"<p>{UNTESTED_BEST} the highest value; without the study's leaderboard "
            f"({LEADERBOARD}) no test says where the others stand against it.</p>"
        )
    summary_page = layout.summary("html")
    links = [_link("Full summary", _relative(summary_page), open_entry_js(summary_page))]
    for study in dict.fromkeys(frame["study"]):
        category = catalog.STUDY_TITLES.get(study, study)
        links.append(_link(short_title(study), "report.html", show_category_js(category)))
    links.append(
        _link("Run (provenance)", _relative(PROVENANCE_ENTRY), open_entry_js(PROVENANCE_ENTRY))
    )
    parts.append("<p>Open: " + " · ".join(links) + "</p>")
    parts.append("</div>")
    return "\n".join(parts)


PROVENANCE_ENTRY = layout.PROVENANCE_PAGE
