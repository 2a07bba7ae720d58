"""Fill the checkout's results/, logs/, cache/ and .snakemake/ as a finished demo run would,
with placeholder files, so that `make test` runs as it does after `make run` (the README's order)
without CI running the 10-minute demo first.

Every output file of the demo's workflow (from `snakemake --summary`, no job is run) and its log
get a placeholder whose content is no valid result (a test that reads the checkout's results/
fails on it, instead of passing on a clean clone where the file is missing); tests/conftest.py's
guard then fails the suite if a test changes any of these folders. Does nothing where results/
already exists (a real run, which the suite must leave alone too).

    .venv/bin/python .ci/fake_run_tree.py
"""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARK = "PLACEHOLDER of .ci/fake_run_tree.py: a test read the checkout's run folders"
CONTENT = {
    ".tsv": f"placeholder\tn\n{MARK}\t-1\n",
    ".jsonl": f'{{"placeholder": "{MARK}"}}\n',
    ".json": f'{{"placeholder": "{MARK}"}}\n',
    ".html": f"<p>{MARK}</p>\n",
}


def outputs() -> list[tuple[str, str]]:
    """(output file, log files) of every job of the demo workflow."""
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "--summary", "--quiet", "--cores", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    text = proc.stdout[proc.stdout.find("output_file") :]
    return [
        (row["output_file"], row.get("log-file(s)") or "")
        for row in csv.DictReader(io.StringIO(text), delimiter="\t")
        if row.get("output_file")
    ]


def write(rel: str) -> None:
    path = ROOT / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(CONTENT.get(path.suffix, MARK + "\n"), encoding="utf-8")


def main() -> int:
    if (ROOT / "results").exists():
        print("results/ exists: left as it is")
        return 0
    files = outputs()
    for output, logs in files:
        write(output)
        for log in (x.strip() for x in logs.split(",")):
            if log not in ("", "-"):
                write(log)
    for rel in (
        "logs/placeholder.log",
        "cache/responses/placeholder.jsonl",
        ".snakemake/placeholder",
    ):
        write(rel)
    print(
        f"results/: {len(files)} placeholder outputs of the demo run, and placeholders in logs/, cache/ and .snakemake/"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
