"""Refuse to build a report over results that the current config would not reproduce as they are.

``make report`` (oncoeval.report.build) checks this first: it asks Snakemake for its
``--summary`` of every output of the config's workflow and stops, naming the files, when any
is missing or would be rebuilt (made by another config, older than its inputs, or by changed
code or params). A report is then built
only over results that match the run's config; rebuilding them is `make run`'s job (it may call
paid models, which a report must never do on its own).

    python -m oncoeval.report.fresh [snakemake arguments, e.g. --configfile=my.yaml]
"""

from __future__ import annotations

import csv
import io
import subprocess
import sys


def stale_outputs(summary_tsv: str) -> list[dict]:
    """Rows of ``snakemake --summary`` whose file is missing or planned for an update."""
    text = summary_tsv[summary_tsv.find("output_file") :] if "output_file" in summary_tsv else ""
    rows = csv.DictReader(io.StringIO(text), delimiter="\t")
    return [
        r
        for r in rows
        if r.get("output_file") and (r.get("status") != "ok" or r.get("plan") != "no update")
    ]


def describe(stale: list[dict], limit: int = 25) -> str:
    lines = [
        f"The report is not built: {len(stale)} result file(s) do not match this config "
        "(missing, or made by another config, by older inputs, code or params).",
        "Run the workflow with the same config first (make run [CONFIG=...]). Stale files:",
    ]
    for r in stale[:limit]:
        lines.append(f"  {r['output_file']}  (status: {r.get('status')}; plan: {r.get('plan')})")
    if len(stale) > limit:
        lines.append(f"  ... and {len(stale) - limit} more")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    cmd = [sys.executable, "-m", "snakemake", "--summary", "--quiet", *argv]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        return proc.returncode
    stale = stale_outputs(proc.stdout)
    if stale:
        print(describe(stale), file=sys.stderr)
        return 1
    print("Results match the config; building the report.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
