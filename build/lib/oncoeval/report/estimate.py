"""What a run would ask of each model, before any model is called (``make estimate``).

It runs only the workflow's stages that call no model (``--omit-from generate convert_model``),
which write the first request sets of every study, then reads Snakemake's dry run for the
``generate`` jobs the run would start. Per model and study it prints the requests, their prompt
tokens, the maximum new tokens they may ask for (each model's own cap applied), and the cost
range: prompt tokens only (every answer empty) up to prompt plus maximum new tokens. Request
sets that are built from another model's answers (judge calls, retries) cannot be counted yet;
they are listed as pending. Prompt tokens are estimated as characters / 4 (tokenizers differ by
model; the API reports the true counts afterwards, in the done: lines and the summary).

    python -m oncoeval.report.estimate [--cores N] [snakemake arguments, e.g. --configfile=X]
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pandas as pd

from ..backends import get_backend
from ..generate import effective_params
from ..records import read_requests

MODELS_JSON = "results/estimate/models.json"
CHARS_PER_TOKEN = 4
COLUMNS = [
    "model", "study", "requests", "prompt_tokens", "max_new_tokens",
    "cost_min_usd", "cost_max_usd", "pending_request_sets",
]  # fmt: skip
_WILDCARDS = re.compile(r"wildcards: study=([^,\s]+), model=([^,\s]+), requestset=([^,\s]+)")


def generate_jobs(dry_run: str) -> list[tuple[str, str, str]]:
    """(study, model, requestset) of every ``generate`` job a Snakemake dry run lists."""
    jobs, in_generate = [], False
    for line in dry_run.splitlines():
        stripped = line.strip()
        if stripped.startswith(("rule ", "localrule ")):
            in_generate = stripped.split()[1].rstrip(":") == "generate"
        elif in_generate and (match := _WILDCARDS.search(stripped)):
            jobs.append(match.groups())
    return sorted(set(jobs))


def prompt_tokens(messages) -> int:
    return math.ceil(sum(len(m.get("content", "")) for m in messages) / CHARS_PER_TOKEN)


def estimate_rows(jobs, models: dict[str, dict], root=".") -> list[dict]:
    """Requests, tokens and cost range per (model, study) of the ``generate`` jobs."""
    acc: dict[tuple[str, str], dict] = defaultdict(
        lambda: {"requests": 0, "prompt_tokens": 0, "max_new_tokens": 0, "pending": []}
    )
    for study, model, requestset in jobs:
        cfg = models[model]
        row = acc[(model, study)]
        path = Path(root) / "results" / study / "requests" / f"{requestset}.jsonl"
        if not path.exists():
            row["pending"].append(requestset)
            continue
        for request in read_requests(path):
            params = effective_params(request, cfg)
            row["requests"] += 1
            row["prompt_tokens"] += prompt_tokens(request.messages)
            row["max_new_tokens"] += int(params.get("max_new_tokens") or 0)
    out = []
    for (model, study), row in sorted(acc.items()):
        cfg = models[model]
        low, high = get_backend(cfg["backend"]).cost_bounds(
            cfg, row["prompt_tokens"], row["max_new_tokens"]
        )
        out.append(
            {
                "model": model,
                "study": study,
                "requests": row["requests"],
                "prompt_tokens": row["prompt_tokens"],
                "max_new_tokens": row["max_new_tokens"],
                "cost_min_usd": low,
                "cost_max_usd": high,
                "pending_request_sets": ", ".join(row["pending"]),
            }
        )
    return out


def render(df: pd.DataFrame) -> str:
    shown = df.copy()
    for col in ("cost_min_usd", "cost_max_usd"):
        shown[col] = ["not priced" if pd.isna(v) else f"${v:.4f}" for v in df[col]]
    lines = [
        "Estimate before any model call (prompt tokens ~ characters / 4; cost from each "
        "model's price; local models cost $0).",
        shown.to_string(index=False) if len(shown) else "(no generate jobs: nothing to call)",
    ]
    if (df["pending_request_sets"] != "").any():
        lines.append(
            "pending_request_sets are built from other models' answers (judges, retries): "
            "they are counted only once the stage before them has run."
        )
    unpriced = sorted(
        {m for m, c in zip(df["model"], df["cost_max_usd"], strict=True) if pd.isna(c)}
    )
    if unpriced:
        lines.append(
            f"No price set for API model(s) {', '.join(unpriced)}: add `price` to bound their cost."
        )
    return "\n".join(lines)


def snakemake(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", *args], capture_output=True, text=True
    )
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-8000:])
        raise SystemExit(f"estimate: snakemake {' '.join(args)} failed ({proc.returncode})")
    return proc


def main(argv: list[str]) -> int:
    # The stages that call no model, and the model settings of this config.
    snakemake(*argv, "all", MODELS_JSON, "--omit-from", "generate", "convert_model")
    dry = snakemake(*argv, "-n")
    models = json.loads(Path(MODELS_JSON).read_text(encoding="utf-8"))
    df = pd.DataFrame(
        estimate_rows(generate_jobs(dry.stdout + dry.stderr), models), columns=COLUMNS
    )
    Path("results/estimate/estimate.tsv").write_text(
        df.to_csv(sep="\t", index=False, float_format="%.6g"), encoding="utf-8"
    )
    print(render(df))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
