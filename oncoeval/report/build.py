"""Build the Snakemake report of a run, quietly: ``make report`` and the end of ``make run``.

First the freshness check (:mod:`oncoeval.report.fresh`: no report over results that the
config would not reproduce), then ``snakemake --report``. Snakemake's progress lines (one
"Adding" per file, "Loading script code" per rule) and library warnings are kept back when the
report is built; when it is not, everything Snakemake printed is shown but those lines.

    python -m oncoeval.report.build --report results/report.html [snakemake arguments]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

from ..core import layout
from . import fresh

# Snakemake's per-file and per-rule progress lines of `--report`.
PROGRESS = re.compile(r"^(Adding .* \(.*\)\.|Loading script code for rule .*)$")


def shown_on_failure(output: str) -> str:
    """What a failed report step prints: Snakemake's output without its progress lines."""
    return "\n".join(line for line in output.splitlines() if not PROGRESS.match(line))


def build(report: str, argv: list[str]) -> int:
    """Check freshness, then build ``report``; 0 when it was built (nothing printed then)."""
    check = subprocess.run(
        [sys.executable, "-m", "snakemake", "--summary", "--quiet", *argv],
        capture_output=True,
        text=True,
    )
    if check.returncode != 0:
        sys.stderr.write(shown_on_failure(check.stdout + check.stderr) + "\n")
        return check.returncode
    stale = fresh.stale_outputs(check.stdout)
    if stale:
        print(fresh.describe(stale), file=sys.stderr)
        return 1
    # Library warnings (e.g. un-awaited coroutines at exit) are not the reader's business here.
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", *argv, "--report", report],
        capture_output=True,
        text=True,
        env=env,
    )
    if proc.returncode != 0:
        sys.stderr.write(shown_on_failure(proc.stdout + proc.stderr) + "\n")
        sys.stderr.write(f"The report was not built ({report}).\n")
    return proc.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--report", default=layout.REPORT_HTML)
    args, rest = parser.parse_known_args(argv)
    return build(args.report, rest)


if __name__ == "__main__":
    sys.exit(main())
