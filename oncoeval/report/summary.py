"""The summary page: each study's headline result per model, then what the run cost.

Study tables are read by file with their known headline columns, so a study that adds columns
or rows does not break the summary; a table or column that is missing is reported as such.
Usage (requests, failures, tokens, cost, wall time) is counted from the responses files and
the ``generate`` jobs' Snakemake benchmarks.
"""

from __future__ import annotations

import argparse
import glob
import html
import math
import os
import sys
import textwrap
from pathlib import Path

import pandas as pd
import tabulate

from .. import layout
from ..compare import BEHIND, DESCRIPTIVE, LEADER
from ..exposure.facts import warning as exposure_warning
from ..failures import filtered
from ..io import iter_jsonl
from ..layout import IN_STUDY, ResultPaths
from ..records import Response
from ..studies import STUDIES
from ..studies.contract import Answers, Headline
from . import catalog, landing, tables

MODEL_COLUMNS = ("model", "responder", "held_out_model")
N_COLUMNS = ("n", "n_profiles", "n_patients", "n_notes", "n_questions", "n_test", "n_units")
UNSCORED_COLUMNS = ("n_unscored", "parse_failures", "unscored")
# What the model did, per model and study (oncoeval.studies.contract.Answers), beside each headline.
ANSWER_COLUMNS = ["answers", "cut_share", "unparsed_share", "failed", "filtered"]
SUMMARY_COLUMNS = [
    "study", "model", "measure", "value", "ci_low", "ci_high", "n", "n_unscored", "n_clusters",
    "unit", *ANSWER_COLUMNS, "warnings", "source",
]  # fmt: skip
SUMMARY_NOTE = (
    "Headline result of each study per model, with 95% CIs over whole clusters, chosen by the "
    "measure's declared kind and range (Wilson for a share of independent units, else a "
    "Wilson-type score interval with the effective n of the cluster-robust SE). Judged rates "
    "appear twice: as the raw judge verdicts and corrected for the judge's error measured on "
    "the validation set (or the reason no correction can be made). Beside each headline, what "
    "the model did: the share of its answers cut at the token cap, the share with nothing "
    "parsed, and its failed and filtered calls; 'warnings' flags a headline where more than "
    "half of the answers were cut or unparsed. CORAL's published view credits an answer of "
    "'unknown' where the gold is unknown; its informative view scores known values only."
)
# A headline is flagged when more than this share of the model's answers was cut or unparsed.
WARN_SHARE = 0.5
# cost_usd: every answer's recorded cost; spent_usd: answers this run's calls paid for;
# cached_usd: the recorded cost of answers read from the cache (paid for by an earlier run).
# The run's scope, last: a capped or subset run names itself in every row ("" for a full run).
SCOPE_COLUMN = "scope"
USAGE_COLUMNS = [
    "model", "requests", "failed", "cached", "prompt_tokens", "completion_tokens",
    "cost_usd", "spent_usd", "cached_usd", "wall_s",
]  # fmt: skip


def _first(columns, candidates):
    return next((c for c in candidates if c in columns), None)


def study_headlines(study: str) -> tuple[Headline, ...]:
    """The headline measures the study's workflow.py declares (``HEADLINES``)."""
    return tuple(catalog.study_declares(study, "HEADLINES", ()))


def headline_rows(results: Path, studies) -> list[dict]:
    """One row per (headline measure, model) of the enabled ``studies``, in registry order."""
    rows = []
    for h in (h for s in STUDIES if s in studies for h in study_headlines(s)):
        path = Path(results) / h.study / h.table
        base = {"study": h.study, "measure": h.measure, "source": str(path)}
        if not path.exists():
            rows.append({**base, "model": "(table not written)"})
            continue
        df = pd.read_csv(path, sep="\t")
        if h.column not in df.columns:
            rows.append({**base, "model": f"(no column {h.column})"})
            continue
        for column, value in h.where:
            if column in df.columns:
                df = df[df[column] == value]
        model_col = _first(df.columns, MODEL_COLUMNS)
        n_col = _first(df.columns, N_COLUMNS)
        unscored_col = _first(df.columns, UNSCORED_COLUMNS)
        invalid = [c for c in df.columns if c.startswith("invalid_")]
        ranked = _ranked_counts(Path(results) / h.study, h.measure)
        for _, r in df.iterrows():
            model = r[model_col] if model_col else ""
            counts = answer_counts(results, h.study, model) if model_col else {}
            row = {
                **base,
                **counts,
                "warnings": "; ".join(
                    w for w in (warnings_of(counts), exposure_warning(results, h.study, model)) if w
                ),
                "model": model,
                "value": _cell(r[h.column]),
                "ci_low": r.get(f"{h.column}_ci_low", float("nan")),
                "ci_high": r.get(f"{h.column}_ci_high", float("nan")),
                "n": r[n_col] if n_col else float("nan"),
                "n_unscored": r[unscored_col]
                if unscored_col
                else (r[invalid].sum() if invalid else float("nan")),
                "n_clusters": float("nan"),
                # "n_notes" counts notes; a bare "n", the study's resampling unit
                "unit": catalog.N_COLUMNS.get(n_col or "", "").removesuffix("s")
                or (_unit_words(catalog.RESAMPLINGS.get(h.study)).split("/")[0] if n_col else ""),
            }
            # The units the interval was made over, as the leaderboard counts them, so that the
            # summary, the landing and the leaderboard state one n in one unit.
            rows.append({**row, **ranked.get(model, {})})
    return rows


def _ranked_counts(study_root: Path, measure: str) -> dict[str, dict]:
    """model -> n, n_unscored, n_clusters and the unit of one measure, from the study's
    leaderboard (oncoeval.compare); {} where it does not rank the measure."""
    path = study_root / IN_STUDY.table(layout.LEADERBOARD)
    if not path.exists():
        return {}
    board = pd.read_csv(path, sep="\t")
    needed = {"measure", "model", "n_units", "n_unscored"}
    if not needed <= set(board.columns):
        return {}
    resampling = catalog.RESAMPLINGS.get(study_root.name)
    out = {}
    for _, r in board[board["measure"] == measure].iterrows():
        if pd.isna(r["n_units"]):  # not compared: the table's own count stands
            continue
        out[r["model"]] = {
            "n": r["n_units"],
            "n_unscored": r["n_unscored"],
            "n_clusters": r.get("n_clusters", float("nan")),
            "unit": _unit_words(resampling),
        }
    return out


def _unit_words(resampling) -> str:
    """ "rollout/patient": the resampling unit and its cluster in a word or two each."""
    if resampling is None:
        return ""
    unit, cluster = (str(x).split(" (", 1)[0] for x in (resampling.unit, resampling.cluster))
    return unit if cluster == unit else f"{unit}/{cluster}"


def study_answers(study: str) -> Answers | None:
    """The answers a study's workflow.py declares (``ANSWERS``), else None."""
    return catalog.study_declares(study, "ANSWERS", None)


def answer_counts(results: Path, study: str, model: str) -> dict:
    """How one model's answers in a study came out: how many, the share cut at the token cap
    (``finish_reason`` ``length``), the share with nothing parsed, failed calls, and calls the
    provider filtered (``content_filter``). NaN where the files are not there."""
    declared = study_answers(study)
    out = dict.fromkeys(ANSWER_COLUMNS, float("nan"))
    if declared is None:
        return out
    responses = Path(results) / study / IN_STUDY.responses(model, declared.requestset)
    if not responses.exists():
        return out
    rows = list(iter_jsonl(responses))
    n = len(rows)
    out["answers"] = n
    out["failed"] = sum(r.get("error") is not None for r in rows)
    out["filtered"] = sum(filtered(Response.from_dict(r)) for r in rows)
    out["cut_share"] = sum(r.get("finish_reason") == "length" for r in rows) / n if n else 0.0
    parsed = Path(results) / study / declared.parsed.format(model=model)
    if parsed.exists():
        table = _read_table(parsed)
        if len(table):
            ok = table.index.isin(table.query(declared.ok, engine="python").index)
            keys = list(declared.keys)
            parsed_any = pd.Series(ok, index=table.index).groupby([table[k] for k in keys]).any()
            unparsed = int((~parsed_any).sum())
        else:
            unparsed = 0
        out["unparsed_share"] = unparsed / n if n else 0.0
    return out


def _read_table(path: Path) -> pd.DataFrame:
    if path.suffix == ".tsv":
        df = pd.read_csv(path, sep="\t", keep_default_na=False)
    else:
        df = pd.DataFrame(list(iter_jsonl(path)))
    # Missing values read as "" so that a query like ``reason == ''`` means "no reason".
    df = df.reset_index(drop=True).astype(object)
    return df.where(df.notna(), "")


def warnings_of(counts: dict) -> str:
    """What a reader must know before trusting a headline: most answers cut or unparsed."""
    notes = []
    n = counts.get("answers")
    for column, what in (
        ("cut_share", "cut at the token cap"),
        ("unparsed_share", "nothing parsed"),
    ):
        share = counts.get(column)
        if isinstance(share, float) and not math.isnan(share) and share > WARN_SHARE:
            notes.append(f"{what} in {round(share * n)}/{int(n)} answers")
    return "; ".join(notes)


def _cell(value):
    """A number, or the text a column of numbers and reasons holds (read back as strings)."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


LEADER_COLUMNS = [
    "study",
    "measure",
    "leader",
    "equivalent or not separable",
    "behind the leader",
    "detectable difference",
]


def leader_rows(results: Path, studies) -> list[dict]:
    """Per study and compared headline measure: the leader, the models equivalent to it or not
    separable from it at this n (first, before any rank), the models significantly behind with
    their rank, and the minimum detectable difference of the study at its n (results/{study}/
    tables/leaderboard.tsv and model_comparison.tsv, oncoeval.compare). A descriptive measure
    (not the study's primary one) says so beside its name."""
    rows = []
    for study in (s for s in STUDIES if s in studies):
        board_path = Path(results) / study / IN_STUDY.table(layout.LEADERBOARD)
        comparison_path = Path(results) / study / IN_STUDY.table(layout.MODEL_COMPARISON)
        if not board_path.exists():
            continue
        board = pd.read_csv(board_path, sep="\t")
        comparison = (
            pd.read_csv(comparison_path, sep="\t") if comparison_path.exists() else pd.DataFrame()
        )
        for measure, part in board.groupby("measure", sort=False):
            said = part["standing"] if "standing" in part else pd.Series(pd.NA, index=part.index)
            said = said.where(said.notna(), "").astype(str)
            leader = part[said == LEADER]
            behind = part[said == BEHIND]
            others = part[~said.isin([LEADER, BEHIND, ""])]
            descriptive = "family" in part and (part["family"] == DESCRIPTIVE).all()
            rows.append(
                {
                    "study": study,
                    "measure": measure + (" (descriptive)" if descriptive else ""),
                    "leader": ", ".join(leader["model"]) or "(no value)",
                    "equivalent or not separable": ", ".join(
                        f"{m} (no value)"  # unscored: nothing to rank or compare
                        if pd.isna(v)
                        else f"{m} ({s.replace(' from the leader', '').replace(' to the leader', '')})"
                        for m, s, v in zip(
                            others["model"], said[others.index], others["value"], strict=True
                        )
                    )
                    or "none",
                    "behind the leader": ", ".join(
                        f"{m} (rank {tables.format_count(r)})"
                        if not pd.isna(r)
                        else f"{m} (no value)"
                        for m, r in zip(behind["model"], behind["rank"], strict=True)
                    )
                    or "none",
                    "detectable difference": _mdd_text(comparison, measure),
                }
            )
    return rows


def _mdd_text(comparison: pd.DataFrame, measure: str) -> str:
    """ "about 0.12 with 21 units (80% power)": the median over the measure's pairs; or the
    sentence that no difference can be significant with its clusters and comparisons."""
    if comparison.empty or "mdd" not in comparison.columns:
        return "fewer than two models"
    part = comparison[comparison["measure"] == measure]
    if not len(part):
        return "fewer than two models"
    said = [v for v in part["mdd"] if isinstance(v, str) and v.startswith("no difference")]
    if said:
        return said[0]
    known = pd.to_numeric(part["mdd"], errors="coerce").dropna()
    if known.empty:
        return "not estimable"
    n = int(part["n_units"].fillna(0).max())
    clusters = int(part["n_clusters"].fillna(0).max()) if "n_clusters" in part else n
    unit = f"{n} units" + (f" in {clusters} clusters" if clusters != n else "")
    return f"about {known.median():.3g} with {unit}"


def _sum(values):
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _cost(values) -> float | None:
    """The cost of answers: 0 for none, None when any one's is unknown."""
    return None if any(v is None for v in values) else float(sum(values))


def usage_rows(root: Path, models=None) -> list[dict]:
    """Per model: requests, failed calls, cached answers, tokens, cost and generate wall time.

    ``models`` (model id -> the studies it is used in, as ``oncoeval.config.used_models``
    gives it) keeps the count to this config's models and studies: responses an earlier config
    left under ``results/`` for another study or model are not counted. A list of ids keeps the
    models only. Cost is split into what this run's calls spent and the recorded cost of the
    answers read from the cache.
    """
    root = Path(root)
    per_model: dict[str, dict] = {}
    for path in sorted(glob.glob(str(root / ResultPaths("*").responses("*", "*")))):
        model, study = Path(path).parent.name, Path(path).parents[2].name
        if models is not None and model not in models:
            continue
        # Ad-hoc sets are named "adhoc:<set>"; their answers are under results/adhoc/.
        if isinstance(models, dict) and study not in {s.split(":")[0] for s in models[model]}:
            continue
        rows = list(iter_jsonl(path))
        u = per_model.setdefault(
            model,
            {"model": model, "_prompt": [], "_completion": [], "_spent": [], "_cached": []},
        )
        u["requests"] = u.get("requests", 0) + len(rows)
        u["failed"] = u.get("failed", 0) + sum(r.get("error") is not None for r in rows)
        u["cached"] = u.get("cached", 0) + sum(bool(r.get("cached")) for r in rows)
        u["_prompt"] += [r.get("prompt_tokens") for r in rows]
        u["_completion"] += [r.get("completion_tokens") for r in rows]
        for r in rows:
            if r.get("error") is None:  # a failed call has no cost recorded
                u["_cached" if r.get("cached") else "_spent"].append(r.get("cost_usd"))
    out = []
    for model, u in per_model.items():
        wall = 0.0
        for bench in glob.glob(str(root / "benchmarks" / "*" / "generate" / model / "*.tsv")):
            wall += float(pd.read_csv(bench, sep="\t")["s"].sum())
        # No answer of the kind: nothing spent (or read), not "not priced"; one answer of
        # unknown cost makes the sum unknown (never a partial sum, never $0).
        spent, cached = _cost(u["_spent"]), _cost(u["_cached"])
        out.append(
            {
                "model": model,
                "requests": u["requests"],
                "failed": u["failed"],
                "cached": u["cached"],
                "prompt_tokens": _sum(u["_prompt"]),
                "completion_tokens": _sum(u["_completion"]),
                "cost_usd": None if spent is None or cached is None else spent + cached,
                "spent_usd": spent,
                "cached_usd": cached,
                "wall_s": round(wall, 1),
            }
        )
    return out


def summary_frames(root: Path, studies, models=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    root = Path(root)
    headline = pd.DataFrame(headline_rows(root / layout.RESULTS, studies), columns=SUMMARY_COLUMNS)
    usage = pd.DataFrame(usage_rows(root, models), columns=USAGE_COLUMNS)
    return headline, usage


def display_frame(headline: pd.DataFrame) -> pd.DataFrame:
    """The headline rows as a reader sees them: ``value [95% CI]``, scored and unscored counts."""
    headline = headline.reindex(columns=SUMMARY_COLUMNS)
    shown = pd.DataFrame(
        {
            "study": [catalog.study_name(s) for s in headline["study"]],
            "model": headline["model"],
            "measure": headline["measure"],
            "result [95% CI]": [
                tables.format_ci(_cell(v), lo, hi)
                for v, lo, hi in zip(
                    headline["value"], headline["ci_low"], headline["ci_high"], strict=True
                )
            ],
            "n scored": [
                tables.n_text(v, c, u if isinstance(u, str) else "")
                for v, c, u in zip(
                    headline["n"], headline["n_clusters"], headline["unit"], strict=True
                )
            ],
            "unscored": [tables.format_count(v) for v in headline["n_unscored"]],
            "cut at cap": _shares(headline, "cut_share"),
            "nothing parsed": _shares(headline, "unparsed_share"),
            "failed": [tables.format_count(v) for v in headline["failed"]],
            "filtered": [tables.format_count(v) for v in headline["filtered"]],
            # An all-empty column reads back as float NaN: cast before filling.
            "warnings": headline["warnings"].astype(object).fillna("").astype(str),
        }
    )
    return shown


def _shares(headline: pd.DataFrame, column: str) -> list[str]:
    """``95% (38/40)``: a share of the model's answers with its count; "–" when not known."""
    return [
        tables.format_share(share, n)
        for share, n in zip(headline[column], headline["answers"], strict=True)
    ]


def usage_display(usage: pd.DataFrame) -> pd.DataFrame:
    usage = usage.reindex(columns=USAGE_COLUMNS)
    shown = usage.copy()
    for col in ("cost_usd", "spent_usd", "cached_usd"):
        shown[col] = [tables.format_usd(v) for v in usage[col]]
    for col in ("requests", "failed", "cached", "prompt_tokens", "completion_tokens"):
        shown[col] = [tables.format_count(v) for v in usage[col]]
    shown["wall_s"] = [tables.format_seconds(v) for v in usage["wall_s"]]
    return shown.rename(columns=tables.column_label)


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


def leaders_shown(leaders: pd.DataFrame) -> pd.DataFrame:
    """The leaders as a reader sees them: the study by its name."""
    return leaders.assign(study=[catalog.study_name(s) for s in leaders["study"]])


def leaders_frame(root: Path, studies) -> pd.DataFrame:
    return pd.DataFrame(leader_rows(Path(root) / layout.RESULTS, studies), columns=LEADER_COLUMNS)


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


# Set by `make run`: it prints the summary itself as the run's last screen, after the report.
END_SUMMARY_ENV = "ONCOEVAL_SUMMARY_AT_END"


def _scope_of(headline: pd.DataFrame) -> str:
    if SCOPE_COLUMN not in headline.columns:
        return ""
    scopes = [s for s in headline[SCOPE_COLUMN].dropna().astype(str) if s]
    return scopes[0] if scopes else ""


# The end-of-run table fits a terminal of this many columns: study by study, the headline
# rows, then what each model did (answers cut, unparsed, failed), its leader and its warnings.
TERMINAL_WIDTH = 100
# Terminal columns wrap their text at these widths (model ids and measure names run long).
TERMINAL_WRAP = {"model": 30, "measure": 28, "result [95% CI]": 24, "n": 14}


def _terminal_table(df: pd.DataFrame, indent: str = "  ", wrap=None) -> list[str]:
    """``df`` as plain aligned columns, long model ids, measures and reasons wrapped (at
    ``wrap``'s widths, by column, over :data:`TERMINAL_WRAP`)."""
    widths = [{**TERMINAL_WRAP, **(wrap or {})}.get(c) for c in df.columns]
    # The header goes in as a row: tabulate pads header columns by two more characters.
    text = tabulate.tabulate(
        [list(df.columns), *df.astype(str).values.tolist()],
        tablefmt="plain",
        maxcolwidths=widths,
        disable_numparse=True,
    )
    return [indent + line.rstrip() for line in text.splitlines()]


def _wrapped(text: str, first: str, rest: str = "    ") -> list[str]:
    return textwrap.wrap(
        text, TERMINAL_WIDTH, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False
    )


def terminal_study_block(
    study: str, headline: pd.DataFrame, leaders: pd.DataFrame | None = None
) -> list[str]:
    """One study's lines of the end-of-run table, none wider than :data:`TERMINAL_WIDTH`."""
    rows = headline[headline["study"] == study]
    shown = display_frame(rows).drop(columns="study")
    title = catalog.STUDY_TITLES.get(study, study).split(" ", 1)[-1]
    lines = [title]
    if leaders is not None and len(leaders):
        for _, lead in leaders[leaders["study"] == study].iterrows():
            lines += _wrapped(
                f"{lead['measure']}: leader {lead['leader']}; equivalent or not separable: "
                f"{lead['equivalent or not separable']}; behind: {lead['behind the leader']}; "
                f"detectable difference: {lead['detectable difference']}.",
                "  ",
            )
    lines += _terminal_table(
        shown[["model", "measure", "result [95% CI]", "n scored", "unscored"]].rename(
            columns={"n scored": "n"}
        )
    )
    # What each model did: once per model (the counts are the model's, not the measure's);
    # a row that no model answered (a mean over models) has none.
    did = ["cut at cap", "nothing parsed", "failed", "filtered"]
    first = shown.drop_duplicates("model")
    first = first[(first[did] != "–").any(axis=1)]
    if len(first):
        lines += ["", *_terminal_table(first[["model", *did]])]
    for model, warning in zip(first["model"], first["warnings"], strict=True):
        if warning:
            lines += _wrapped(f"! {model}: {warning}", "  ")
    return lines


def terminal_usage(usage: pd.DataFrame) -> list[str]:
    """Calls, tokens and cost per model, narrowed to :data:`TERMINAL_WIDTH` columns."""
    shown = usage_display(usage)
    narrow = pd.DataFrame(
        {
            "model": shown["model"],
            "calls": shown["requests"],
            "failed": shown["failed"],
            "cached": shown["cached"],
            "tokens": [
                "–" if p == c == "–" else f"{p}/{c}"
                for p, c in zip(shown["prompt tokens"], shown["completion tokens"], strict=True)
            ],
            "spent": shown["spent in this run"],
            "from cache": shown["cost of answers read from the cache"],
            "wall s": shown["wall time (s)"],
        }
    )
    # Eight columns: the model id wraps sooner than in the headline table.
    return _terminal_table(narrow, wrap={"model": 24})


def terminal_summary(root=".") -> str:
    """The end-of-run results: the run's scope when capped or subset, per study its leaders,
    headlines with CIs and n, what each model did and its warnings, then calls, failures,
    tokens and cost per model and in all ("" when no summary was written); no line is wider
    than :data:`TERMINAL_WIDTH`."""
    root = Path(root)
    tsv, usage_tsv = root / layout.summary("tsv"), root / layout.USAGE
    if not tsv.exists():
        return ""
    headline = pd.read_csv(tsv, sep="\t")
    text = ["", f"OncoEval results ({layout.summary('md')})"]
    scope = _scope_of(headline)
    if scope:
        text += _wrapped(f"!! {scope}", "", "   ")
    leaders = leaders_frame(root, set(headline["study"]))
    for study in dict.fromkeys(headline["study"]):
        text += ["", *terminal_study_block(study, headline, leaders)]
    if usage_tsv.exists():
        usage = pd.read_csv(usage_tsv, sep="\t")
        text += [
            "",
            "Model calls, tokens (in: prompt / out: completion) and cost",
            *terminal_usage(usage),
        ]
        text.append(usage_total(usage))
    return "\n".join(text) + "\n"


def usage_total(usage: pd.DataFrame) -> str:
    """One line: the calls, failures, tokens and cost of every model together."""
    cost = usage["cost_usd"].dropna()
    priced = tables.format_usd(cost.sum() if len(cost) else None)
    return (
        f"Total: {int(usage['requests'].sum())} calls ({int(usage['failed'].sum())} failed, "
        f"{int(usage['cached'].sum())} cached); tokens in/out "
        f"{int(usage['prompt_tokens'].fillna(0).sum())}/"
        f"{int(usage['completion_tokens'].fillna(0).sum())}; cost {priced}."
    )


def print_run_end(root=".") -> None:
    """The Snakefile's onsuccess: the results table, unless `make run` prints it last itself."""
    if not os.environ.get(END_SUMMARY_ENV):
        print(terminal_summary(root))


def main(argv=None) -> int:
    """``python -m oncoeval.report.summary [--report PATH]``: the results, then the report's path
    (the last lines of `make run`)."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--root", default=".")
    parser.add_argument("--report", help="the report file to name on the last line")
    args = parser.parse_args(argv)
    text = terminal_summary(args.root)
    print(text.rstrip("\n") or f"No results summary was written ({layout.summary()} is missing).")
    if args.report:
        print(f"Report: {args.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
