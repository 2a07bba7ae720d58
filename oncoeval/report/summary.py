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
from pathlib import Path

import pandas as pd

from ..compare import smallest_p
from ..io import iter_jsonl
from ..studies import STUDIES
from ..studies.contract import Headline
from . import catalog, landing, tables

MODEL_COLUMNS = ("model", "responder", "held_out_model")
N_COLUMNS = ("n", "n_profiles", "n_patients", "n_notes", "n_questions", "n_test", "n_units")
UNSCORED_COLUMNS = ("n_unscored", "parse_failures", "unscored")
SUMMARY_COLUMNS = [
    "study", "model", "measure", "value", "ci_low", "ci_high", "n", "n_unscored", "source"
]  # fmt: skip
# The run's scope, last: a capped or subset run names itself in every row ("" for a full run).
SCOPE_COLUMN = "scope"
USAGE_COLUMNS = [
    "model", "requests", "failed", "cached", "prompt_tokens", "completion_tokens",
    "cost_usd", "wall_s",
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
        for _, r in df.iterrows():
            rows.append(
                {
                    **base,
                    "model": r[model_col] if model_col else "",
                    "value": _cell(r[h.column]),
                    "ci_low": r.get(f"{h.column}_ci_low", float("nan")),
                    "ci_high": r.get(f"{h.column}_ci_high", float("nan")),
                    "n": r[n_col] if n_col else float("nan"),
                    "n_unscored": r[unscored_col]
                    if unscored_col
                    else (r[invalid].sum() if invalid else float("nan")),
                }
            )
    return rows


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
    "tied for first",
    "behind the leader",
    "detectable difference",
]


def leader_rows(results: Path, studies) -> list[dict]:
    """Per study and compared headline measure: the leader and the models tied with it (first,
    so "tied" is read before any rank), the models significantly behind with their rank, and
    the minimum detectable difference of the study at its n (results/{study}/tables/
    leaderboard.tsv and model_comparison.tsv, oncoeval.compare)."""
    rows = []
    for study in (s for s in STUDIES if s in studies):
        board_path = Path(results) / study / "tables" / "leaderboard.tsv"
        comparison_path = Path(results) / study / "tables" / "model_comparison.tsv"
        if not board_path.exists():
            continue
        board = pd.read_csv(board_path, sep="\t")
        comparison = (
            pd.read_csv(comparison_path, sep="\t") if comparison_path.exists() else pd.DataFrame()
        )
        for measure, part in board.groupby("measure", sort=False):
            tied = part[part["tied_with_best"].astype(str) == "True"]
            behind = part[part["tied_with_best"].astype(str) != "True"]
            rows.append(
                {
                    "study": study,
                    "measure": measure,
                    "tied for first": ", ".join(_leader_names(tied)) or "(no value)",
                    "behind the leader": ", ".join(
                        f"{m} (rank {_int(r)})"
                        for m, r in zip(behind["model"], behind["rank"], strict=True)
                    )
                    or "none",
                    "detectable difference": _mdd_text(comparison, measure),
                }
            )
    return rows


def _leader_names(tied: pd.DataFrame) -> list[str]:
    names = []
    for model, best in zip(tied["model"], tied["best"], strict=True):
        names.append(f"{model} (leader)" if model == best else f"{model} (tied)")
    return names


def _mdd_text(comparison: pd.DataFrame, measure: str) -> str:
    """ "about 0.12 with 21 units (80% power)": the median over the measure's pairs."""
    if comparison.empty or "mdd" not in comparison.columns:
        return "fewer than two models"
    part = comparison[comparison["measure"] == measure]
    known = part["mdd"].dropna()
    if known.empty:
        if not len(part):
            return "fewer than two models"
        clusters = int(part["n_clusters"].fillna(0).max()) if "n_clusters" in part else 0
        if clusters and smallest_p(clusters) > 0.05:
            return f"none: with {clusters} units no difference can be significant"
        return "not estimable (no spread in the paired differences)"
    n = int(part["n_units"].fillna(0).max())
    clusters = int(part["n_clusters"].fillna(0).max()) if "n_clusters" in part else n
    unit = f"{n} units" + (f" in {clusters} clusters" if clusters != n else "")
    return f"about {known.median():.3g} with {unit}"


def _sum(values):
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def usage_rows(root: Path, models=None) -> list[dict]:
    """Per model: requests, failed calls, cached answers, tokens, cost and generate wall time."""
    root = Path(root)
    per_model: dict[str, dict] = {}
    for path in sorted(glob.glob(str(root / "results" / "*" / "responses" / "*" / "*.jsonl"))):
        model = Path(path).parent.name
        if models is not None and model not in models:
            continue
        rows = list(iter_jsonl(path))
        u = per_model.setdefault(
            model, {"model": model, "_prompt": [], "_completion": [], "_cost": []}
        )
        u["requests"] = u.get("requests", 0) + len(rows)
        u["failed"] = u.get("failed", 0) + sum(r.get("error") is not None for r in rows)
        u["cached"] = u.get("cached", 0) + sum(bool(r.get("cached")) for r in rows)
        u["_prompt"] += [r.get("prompt_tokens") for r in rows]
        u["_completion"] += [r.get("completion_tokens") for r in rows]
        u["_cost"] += [r.get("cost_usd") for r in rows]
    out = []
    for model, u in per_model.items():
        wall = 0.0
        for bench in glob.glob(str(root / "benchmarks" / "*" / "generate" / model / "*.tsv")):
            wall += float(pd.read_csv(bench, sep="\t")["s"].sum())
        out.append(
            {
                "model": model,
                "requests": u["requests"],
                "failed": u["failed"],
                "cached": u["cached"],
                "prompt_tokens": _sum(u["_prompt"]),
                "completion_tokens": _sum(u["_completion"]),
                "cost_usd": _sum(u["_cost"]),
                "wall_s": round(wall, 1),
            }
        )
    return out


def summary_frames(root: Path, studies, models=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    root = Path(root)
    headline = pd.DataFrame(headline_rows(root / "results", studies), columns=SUMMARY_COLUMNS)
    usage = pd.DataFrame(usage_rows(root, models), columns=USAGE_COLUMNS)
    return headline, usage


def display_frame(headline: pd.DataFrame) -> pd.DataFrame:
    """The headline rows as a reader sees them: ``value [95% CI]``, scored and unscored counts."""
    shown = pd.DataFrame(
        {
            "study": headline["study"],
            "model": headline["model"],
            "measure": headline["measure"],
            "result [95% CI]": [
                tables.format_ci(_cell(v), lo, hi)
                for v, lo, hi in zip(
                    headline["value"], headline["ci_low"], headline["ci_high"], strict=True
                )
            ],
            "n scored": [tables.format_number(_int(v)) for v in headline["n"]],
            "unscored": [tables.format_number(_int(v)) for v in headline["n_unscored"]],
        }
    )
    return shown


def _int(value):
    return int(value) if isinstance(value, int | float) and not math.isnan(value) else value


def usage_display(usage: pd.DataFrame) -> pd.DataFrame:
    shown = usage.copy()
    shown["cost_usd"] = ["not priced" if pd.isna(v) else f"${v:.4f}" for v in usage["cost_usd"]]
    for col in ("prompt_tokens", "completion_tokens"):
        shown[col] = ["–" if pd.isna(v) else f"{int(v)}" for v in usage[col]]
    shown["wall_s"] = [f"{v:.1f}" for v in usage["wall_s"]]
    return shown


def _styled(df: pd.DataFrame, table_id: str) -> str:
    return tables.wrap(df.style.format(escape="html").hide(axis="index"), table_id)


def leaders_frame(root: Path, studies) -> pd.DataFrame:
    return pd.DataFrame(leader_rows(Path(root) / "results", studies), columns=LEADER_COLUMNS)


LEADERS_NOTE = (
    "Which model leads each headline measure, and which are tied with it: a model is tied "
    "when the leader's advantage over it is not significant after the multiplicity adjustment "
    "(paired test on the units both were scored on; results/{study}/tables/leaderboard.tsv). "
    "Detectable difference: the true difference the study's paired comparison finds with 80% "
    "power at its n (docs/comparisons.md)."
)


def fragment_html(
    headline: pd.DataFrame, usage: pd.DataFrame, leaders: pd.DataFrame | None = None
) -> str:
    """The summary as an HTML fragment: who leads (and who is tied with the leader), one table
    per study, then the usage table."""
    parts = []
    if leaders is not None and len(leaders):
        parts.append("<h3>Which model leads, and which are tied with it</h3>")
        parts.append(f"<p class='caption'>{html.escape(LEADERS_NOTE)}</p>")
        parts.append(_styled(leaders, "summary-leaders"))
    shown = display_frame(headline)
    for study in dict.fromkeys(headline["study"]):
        block = shown[shown["study"] == study].drop(columns="study")
        title = catalog.STUDY_TITLES.get(study, study).split(" ", 1)[-1]
        parts.append(f"<h3>{html.escape(title)}</h3>")
        parts.append(_styled(block, f"summary-{study}"))
    parts.append("<h3>Models: calls, tokens, cost and wall time</h3>")
    parts.append(_styled(usage_display(usage), "summary-usage"))
    return "\n".join(parts)


def write_summary(
    root, studies, out_tsv, out_md, out_html, fragment, usage_tsv, models=None, replayed=(),
    scope="",
):  # fmt: skip
    """Write results/summary.{tsv,md,html}, the usage table and the report's landing fragment;
    ``replayed`` ids are named in the note as stored answers, not models; ``scope`` is the
    sentence of a capped or subset run (:func:`catalog.run_scope`)."""
    headline, usage = summary_frames(Path(root), studies, models)
    headline[SCOPE_COLUMN] = scope
    leaders = leaders_frame(Path(root), studies)
    headline.to_csv(out_tsv, sep="\t", index=False, float_format="%.6g")
    usage.to_csv(usage_tsv, sep="\t", index=False, float_format="%.6g")
    body = fragment_html(headline, usage, leaders)
    Path(fragment).write_text(
        landing.landing_html(headline, Path(root) / "results", replayed, scope), encoding="utf-8"
    )
    note = (
        "Headline result of each study per model, with percentile-bootstrap 95% CIs; "
        "judged rates are the raw judge verdicts (no judge-error correction applied)."
        + catalog.stored_answers_note(replayed)
    )
    scope_html = f"<p class='caption'><strong>{html.escape(scope)}</strong></p>\n" if scope else ""
    Path(out_html).write_text(
        tables.page("OncoEval summary", f"{scope_html}<p class='caption'>{note}</p>\n{body}"),
        encoding="utf-8",
    )
    md = ["# OncoEval summary", ""] + ([f"**{scope}**", ""] if scope else []) + [note, ""]
    if len(leaders):
        md += ["## Which model leads, and which are tied with it", "", LEADERS_NOTE, ""]
        md += [leaders.to_markdown(index=False), "", "## Headline results per model", ""]
    md.append(display_frame(headline).to_markdown(index=False))
    md += ["", "## Models", "", usage_display(usage).to_markdown(index=False), ""]
    Path(out_md).write_text("\n".join(md), encoding="utf-8")
    return headline, usage


# Set by `make run`: it prints the summary itself as the run's last screen, after the report.
END_SUMMARY_ENV = "ONCOEVAL_SUMMARY_AT_END"


def _scope_of(headline: pd.DataFrame) -> str:
    if SCOPE_COLUMN not in headline.columns:
        return ""
    scopes = [s for s in headline[SCOPE_COLUMN].dropna().astype(str) if s]
    return scopes[0] if scopes else ""


def terminal_summary(root=".") -> str:
    """The end-of-run results: the run's scope when capped or subset, the headlines with CIs,
    then calls, failures, tokens and cost per model and in all ("" when no summary was
    written)."""
    root = Path(root)
    tsv, usage_tsv = root / "results" / "summary.tsv", root / "results" / "usage.tsv"
    if not tsv.exists():
        return ""
    headline = pd.read_csv(tsv, sep="\t")
    text = ["", "OncoEval results (results/summary.md)"]
    scope = _scope_of(headline)
    if scope:
        text.append(f"!! {scope}")
    text.append("")
    leaders = leaders_frame(root, set(headline["study"]))
    if len(leaders):
        text += ["Leader and models tied with it (not significantly behind, adjusted):", ""]
        text += [leaders.to_string(index=False), ""]
    text.append(display_frame(headline).to_string(index=False))
    if usage_tsv.exists():
        usage = pd.read_csv(usage_tsv, sep="\t")
        text += ["", "Model calls, tokens and cost:", usage_display(usage).to_string(index=False)]
        text.append(usage_total(usage))
    return "\n".join(text) + "\n"


def usage_total(usage: pd.DataFrame) -> str:
    """One line: the calls, failures, tokens and cost of every model together."""
    cost = usage["cost_usd"].dropna()
    priced = f"${cost.sum():.4f}" if len(cost) else "not priced"
    return (
        f"Total: {int(usage['requests'].sum())} calls, {int(usage['failed'].sum())} failed, "
        f"{int(usage['cached'].sum())} answered from the cache; "
        f"{int(usage['prompt_tokens'].fillna(0).sum())} prompt + "
        f"{int(usage['completion_tokens'].fillna(0).sum())} completion tokens; cost {priced}."
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
    print(text.rstrip("\n") or "No results summary was written (results/summary.tsv is missing).")
    if args.report:
        print(f"Report: {args.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
