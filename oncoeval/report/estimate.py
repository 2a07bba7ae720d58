"""What a run would ask of each model, before any model is called (``make estimate``).

It runs only the workflow's stages that call no model (``--omit-from generate convert_model``),
which write the first request sets of every study, then reads Snakemake's dry run for the
``generate`` jobs the run would start. Per model and study it prints the requests, their prompt
tokens, the maximum new tokens they may ask for (each model's own cap applied), and the cost
range: prompt tokens only (every answer empty) up to prompt plus maximum new tokens, beside the
same range at the batch price (``batch: true``, oncoeval.backends.batch), then a total per model
and overall. Prompt tokens are estimated as characters / 4 (tokenizers differ by
model; the API reports the true counts afterwards, in the done: lines and the summary).

Only request sets the run would use are read: a file the dry run keeps as it is, never one it
would rebuild (an earlier run's judge requests, built from answers that will change). A request
set the dry run builds from answers (judge calls, retries) is estimated from those answers: one
request per answer, each quoting its template(s) (the ``.txt`` inputs of the job that builds it)
and the answer at its token cap; such rows are marked ``estimated from answers``.

    python -m oncoeval.report.estimate [--cores N] [snakemake arguments, e.g. --configfile=X
        --config only=STUDY limit=5]
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
from ..records import effective_params, read_requests
from . import tables

MODELS_JSON = "results/estimate/models.json"
CHARS_PER_TOKEN = 4
COLUMNS = [
    "model", "study", "requests", "prompt_tokens", "max_new_tokens",
    "cost_min_usd", "cost_max_usd", "batch_cost_min_usd", "batch_cost_max_usd",
    "pending_request_sets",
]  # fmt: skip
COSTS = ["cost_min_usd", "cost_max_usd", "batch_cost_min_usd", "batch_cost_max_usd"]
TOTAL = "all"
_RESPONSES = re.compile(r"results/([^/]+)/responses/([^/]+)/([^/]+)\.jsonl$")
_WILDCARDS = re.compile(r"wildcards: study=([^,\s]+), model=([^,\s]+), requestset=([^,\s]+)")


def dry_run_jobs(dry_run: str) -> list[dict]:
    """The jobs a Snakemake dry run lists: rule, input and output files, wildcards."""
    jobs: list[dict] = []
    for line in dry_run.splitlines():
        stripped = line.strip()
        if stripped.startswith(("rule ", "localrule ")) and stripped.endswith(":"):
            jobs.append({"rule": stripped.split()[1].rstrip(":"), "input": [], "output": []})
        elif jobs and stripped.startswith(("input: ", "output: ")):
            key, _, files = stripped.partition(": ")
            jobs[-1][key] = [f.strip() for f in files.split(",") if f.strip()]
        elif jobs and (match := _WILDCARDS.search(stripped)):
            jobs[-1]["wildcards"] = match.groups()
    return jobs


def generate_jobs(dry_run: str) -> list[tuple[str, str, str]]:
    """(study, model, requestset) of every ``generate`` job a Snakemake dry run lists."""
    return sorted(
        {
            j["wildcards"]
            for j in dry_run_jobs(dry_run)
            if j["rule"] == "generate" and "wildcards" in j
        }
    )


def prompt_tokens(messages) -> int:
    return math.ceil(sum(len(m.get("content", "")) for m in messages) / CHARS_PER_TOKEN)


class RequestSets:
    """Requests, prompt tokens and maximum new tokens of the request sets a run would send.

    A set on disk that the dry run does not rebuild is read; a set the dry run builds is
    estimated from the answers its job reads (``builders``: output path -> that job).
    """

    def __init__(self, models: dict[str, dict], root=".", builders=None):
        self.models, self.root, self.builders = models, Path(root), builders or {}
        self._memo: dict[tuple[str, str], dict] = {}

    def path(self, study: str, requestset: str) -> str:
        return f"results/{study}/requests/{requestset}.jsonl"

    def count(self, study: str, model: str, requestset: str) -> dict | None:
        """{requests, prompt_tokens, max_new_tokens, estimated} for ``model``; None if unknown."""
        key = (study, requestset, model)
        if key not in self._memo:
            self._memo[key] = self._count(study, model, requestset)
        return self._memo[key]

    def _count(self, study, model, requestset):
        path = self.path(study, requestset)
        cfg = self.models[model]
        if path not in self.builders:
            if not (self.root / path).exists():
                return None
            out = {"requests": 0, "prompt_tokens": 0, "max_new_tokens": 0, "estimated": False}
            for request in read_requests(self.root / path):
                out["requests"] += 1
                out["prompt_tokens"] += prompt_tokens(request.messages)
                out["max_new_tokens"] += int(
                    effective_params(request, cfg).get("max_new_tokens") or 0
                )
            return out
        return self._from_answers(study, model, self.builders[path], path)

    def _from_answers(self, study, model, job, path):
        """One request per answer the building job reads, quoting its templates and the answer
        at its cap; each asks for the new tokens of the set's earlier file, else the model's cap."""
        template = sum(
            len((self.root / f).read_text(encoding="utf-8"))
            for f in job["input"]
            if f.endswith(".txt") and (self.root / f).exists()
        )
        answers, quoted = 0, 0
        for f in job["input"]:
            match = _RESPONSES.search(f)
            if not match:
                continue
            answered = self.count(match.group(1), match.group(2), match.group(3))
            if answered is None:
                return None
            answers += answered["requests"]
            quoted += answered["max_new_tokens"]
        per_request = self._new_tokens_per_request(path, model)
        return {
            "requests": answers,
            "prompt_tokens": answers * math.ceil(template / CHARS_PER_TOKEN) + quoted,
            "max_new_tokens": answers * per_request,
            "estimated": True,
        }

    def _new_tokens_per_request(self, path: str, model: str) -> int:
        cfg = self.models[model]
        if (self.root / path).exists():  # the rule's settings, from the earlier file of the set
            for request in read_requests(self.root / path):
                return int(effective_params(request, cfg).get("max_new_tokens") or 0)
        return int(cfg.get("max_new_tokens") or 0)


def estimate_rows(jobs, models: dict[str, dict], root=".", builders=None) -> list[dict]:
    """Requests, tokens and cost range per (model, study) of the ``generate`` jobs, then a
    total row per model (study ``all``) and overall (model and study ``all``)."""
    sets = RequestSets(models, root, builders)
    acc: dict[tuple[str, str], dict] = defaultdict(
        lambda: {"requests": 0, "prompt_tokens": 0, "max_new_tokens": 0, "pending": []}
    )
    for study, model, requestset in jobs:
        row = acc[(model, study)]
        counted = sets.count(study, model, requestset)
        if counted is None or counted["estimated"]:
            row["pending"].append(
                requestset if counted is None else f"{requestset} (estimated from answers)"
            )
        if counted is not None:
            for key in ("requests", "prompt_tokens", "max_new_tokens"):
                row[key] += counted[key]
    out = []
    for (model, study), row in sorted(acc.items()):
        cfg = models[model]
        backend = get_backend(cfg["backend"])
        low, high = backend.cost_bounds(cfg, row["prompt_tokens"], row["max_new_tokens"])
        batch_low, batch_high = backend.batch_cost_bounds(
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
                "batch_cost_min_usd": batch_low,
                "batch_cost_max_usd": batch_high,
                "pending_request_sets": ", ".join(row["pending"]),
            }
        )
    return with_totals(out)


def with_totals(rows: list[dict]) -> list[dict]:
    """The rows with a total per model after its studies, then one overall; a cost total is
    unknown (None) where any of its rows is not priced."""

    def total(part: list[dict], model: str) -> dict:
        sums = {c: sum(r[c] for r in part) for c in ("requests", "prompt_tokens", "max_new_tokens")}
        for c in COSTS:
            costs = [r[c] for r in part]
            sums[c] = None if any(v is None or math.isnan(v) for v in costs) else sum(costs)
        return {"model": model, "study": TOTAL, **sums, "pending_request_sets": ""}

    if not rows:
        return rows
    out = []
    for model in dict.fromkeys(r["model"] for r in rows):
        part = [r for r in rows if r["model"] == model]
        out += [*part, total(part, model)]
    return [*out, total(rows, TOTAL)]


def render(df: pd.DataFrame) -> str:
    shown = df.copy()
    for col in COSTS:
        shown[col] = [tables.format_usd(v) for v in df[col]]
    lines = [
        "Estimate before any model call (prompt tokens ~ characters / 4; cost from each "
        "model's price; local models cost $0; batch_cost: the same calls through the "
        "provider's Batch API, at the model's batch price, half the price unless set).",
        shown.to_string(index=False) if len(shown) else "(no generate jobs: nothing to call)",
    ]
    if (df["pending_request_sets"] != "").any():
        lines.append(
            "pending_request_sets are built from other models' answers (judges, retries): "
            "'estimated from answers' counts one request per answer, quoting its template and "
            "the answer at its token cap (retries: at most one per answer); a set without that "
            "mark is not counted yet."
        )
    unpriced = sorted(
        {
            m
            for m, c in zip(df["model"], df["cost_max_usd"], strict=True)
            if pd.isna(c) and m != TOTAL
        }
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
    # The stages that call no model, and the model settings of this config. The targets come
    # first: `--config k=v` (as `make estimate ARGS=...` passes it) would take any that follow
    # it as further config values.
    snakemake("all", MODELS_JSON, *argv, "--omit-from", "generate", "convert_model")
    dry = snakemake(*argv, "-n")
    jobs = dry_run_jobs(dry.stdout + dry.stderr)
    builders = {out: job for job in jobs if job["rule"] != "generate" for out in job["output"]}
    models = json.loads(Path(MODELS_JSON).read_text(encoding="utf-8"))
    df = pd.DataFrame(
        estimate_rows(generate_jobs(dry.stdout + dry.stderr), models, builders=builders),
        columns=COLUMNS,
    )
    Path("results/estimate/estimate.tsv").write_text(
        df.to_csv(sep="\t", index=False, float_format="%.6g"), encoding="utf-8"
    )
    print(render(df))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
