"""The end-of-run table in the terminal (``python -m oncoeval.report.summary_terminal``), read
back from results/summary.tsv and results/usage.tsv."""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from pathlib import Path

import pandas as pd
import tabulate

from ..core import layout
from . import catalog, tables
from .summary import (
    SCOPE_COLUMN,
    display_frame,
    leaders_frame,
    usage_display,
)

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
    """``python -m oncoeval.report.summary_terminal [--report PATH]``: the results, then the
    report's path (the last lines of `make run`)."""
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
