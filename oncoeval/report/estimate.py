"""What a run would ask of each model, before any model is called (``make estimate``).

It runs only the workflow's stages that call no model (``--omit-from generate convert_model``),
which write the first request sets of every study, then reads Snakemake's dry run for the
``generate`` jobs the run would start. No API key is needed (``oncoeval.config.checks.NO_MODEL_CALLS_ENV``).
Per model and study it gives a range, minimum to maximum, of the calls, their prompt tokens, the
new tokens they may ask for and the cost from each model's ``price`` (beside the same at the batch
price, ``batch: true``), then a total per model and overall:

- A request whose answer is in the response cache (``cache_dir``, shared by runs) is not called:
  it is counted as cached, not in the calls; requests that share a cache key are one call.
- Prompt tokens: at least the words of the messages (whitespace-split: tokenizers that split
  words at spaces, as GPT's and Llama's do, give each word a token or more), at most their UTF-8
  bytes plus {per_message} per message and {per_request} per request for the chat format (a
  byte-level token holds at least one byte). New tokens: from none to each request's limit (the
  model's cap applied).
- A request set the dry run builds from answers (judge calls, retries) is estimated from those
  answers: at most one request per answer, quoting the builder's templates and examples, the
  longest record of each of its record files and the answer at {quoted} bytes per token of its
  limit, and asking for the study's limit of that set (``contract.new_tokens``). At least: one
  request per answer less the model's cached answers, quoting the templates' own words; an
  optional set (a retry, asked only for a reply that did not parse) none. Such rows are marked
  ``estimated from answers``.

Only request sets the run would use are read: a file the dry run keeps as it is, never one it
would rebuild (an earlier run's judge requests, built from answers that will change).

    python -m oncoeval.report.estimate [--cores N] [snakemake arguments, e.g. --configfile=X
        --config only=STUDY limit=5]
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..backends import get_backend
from ..config.checks import NO_MODEL_CALLS_ENV
from ..core import layout
from ..core.layout import ResultPaths
from ..core.records import Request, effective_params, read_requests
from ..models.cache import cache_key
from ..studies import contract

MODELS_JSON = layout.ESTIMATE_MODELS
ESTIMATE_TSV = layout.ESTIMATE_TABLE
# Chat-format tokens beside the messages' text (OpenAI documents 3 per message and 3 per reply).
OVERHEAD_PER_MESSAGE = 4
OVERHEAD_PER_REQUEST = 3
# A quoted answer's bytes per token of its limit (a judge's prompt holds the answer's text).
QUOTED_BYTES_PER_TOKEN = 4
COUNTS = [
    "requests_min", "requests_max", "cached", "prompt_tokens_min", "prompt_tokens_max",
    "max_new_tokens",
]  # fmt: skip
COSTS = ["cost_min_usd", "cost_max_usd", "batch_cost_min_usd", "batch_cost_max_usd"]
COLUMNS = ["model", "study", *COUNTS, *COSTS, "pending_request_sets"]
TOTAL = "all"
WIDTH = 100
_PART = "([^/]+)"
_RESPONSES = re.compile(ResultPaths(_PART).responses(_PART, _PART).replace(".", r"\.") + "$")
_WILDCARDS = re.compile(r"wildcards: study=([^,\s]+), model=([^,\s]+), requestset=([^,\s]+)")
__doc__ = __doc__.format(
    per_message=OVERHEAD_PER_MESSAGE,
    per_request=OVERHEAD_PER_REQUEST,
    quoted=QUOTED_BYTES_PER_TOKEN,
)


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


def prompt_bounds(messages) -> tuple[int, int]:
    """(fewest, most) prompt tokens of one request's messages."""
    texts = [str(m.get("content") or "") for m in messages]
    low = sum(len(t.split()) for t in texts)
    high = sum(len(t.encode("utf-8")) for t in texts)
    return low, high + OVERHEAD_PER_MESSAGE * len(texts) + OVERHEAD_PER_REQUEST


@dataclass
class SetCount:
    """One model's request set: its rows (the answers it will have), the calls it takes (a
    range), the cached requests, and the prompt and new tokens of those calls."""

    rows: int = 0
    row_new_tokens: int = 0  # each row's new-token limit, summed (what a judge may quote)
    requests_min: int = 0
    requests_max: int = 0
    cached: int = 0
    prompt_tokens_min: int = 0
    prompt_tokens_max: int = 0
    max_new_tokens: int = 0
    estimated: bool = False
    optional: bool = False


def cached_keys(cache_dir, model: str) -> set[str]:
    """The keys of a model's response cache (every job's file; a torn line is skipped)."""
    keys = set()
    for path in sorted((Path(cache_dir) / model).glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                keys.add(json.loads(line)["key"])
            except (ValueError, KeyError, TypeError):
                continue
    return keys


def _record_file_bytes(path: Path) -> int:
    """What one request may quote of a builder's input: the longest line of a record file
    (JSONL: one record each), else the whole file (a template, examples)."""
    if path.suffix == ".jsonl":
        with path.open("rb") as handle:
            return max((len(line) for line in handle), default=0)
    return len(path.read_bytes())


def optional_set(requestset: str) -> bool:
    """A retry set: asked only for replies that did not parse (none may be needed)."""
    return "-retry" in requestset


class RequestSets:
    """Calls, prompt tokens and new tokens of the request sets a run would send.

    A set on disk that the dry run does not rebuild is read; a set the dry run builds is
    estimated from the answers its job reads (``builders``: output path -> that job).
    """

    def __init__(self, models, root=".", builders=None, studies=None, cache_dir=None):
        self.models, self.root, self.builders = models, Path(root), builders or {}
        self.studies = studies or {}
        self.cache_dir = self.root / (cache_dir or "cache/responses")
        self._memo: dict[tuple[str, str, str], SetCount | None] = {}
        self._cache: dict[str, set[str]] = {}

    def path(self, study: str, requestset: str) -> str:
        return ResultPaths(study).requests(requestset)

    def cached(self, model: str) -> set[str]:
        if model not in self._cache:
            self._cache[model] = cached_keys(self.cache_dir, model)
        return self._cache[model]

    def count(self, study: str, model: str, requestset: str) -> SetCount | None:
        """The set's :class:`SetCount` for ``model``; None if it cannot be known yet."""
        key = (study, requestset, model)
        if key not in self._memo:
            path = self.path(study, requestset)
            if path in self.builders:
                self._memo[key] = self._from_answers(study, model, requestset, path)
            elif (self.root / path).exists():
                self._memo[key] = self._read(model, path)
            else:
                self._memo[key] = None
        return self._memo[key]

    def _read(self, model: str, path: str) -> SetCount:
        cfg = self.models[model]
        backend = get_backend(cfg["backend"])
        # The requests as the model sees them, one per cache key (as oncoeval.workflow.generate asks).
        prepared = [
            Request(r.request_id, r.messages, effective_params(r, cfg), r.meta)
            for r in read_requests(self.root / path)
        ]
        distinct: dict[str, Request] = {}
        cached: set[str] = set()
        if backend.cacheable:
            identity = backend.identity(cfg)
            for r in prepared:
                distinct.setdefault(cache_key(cfg["backend"], identity, r, r.params), r)
            cached = self.cached(model)
        else:  # replayed by request id
            distinct = {r.request_id: r for r in prepared}
        out = SetCount(rows=len(prepared))
        out.row_new_tokens = sum(int(r.params.get("max_new_tokens") or 0) for r in prepared)
        for key, request in distinct.items():
            if key in cached:
                out.cached += 1
                continue
            low, high = prompt_bounds(request.messages)
            out.requests_min += 1
            out.requests_max += 1
            out.prompt_tokens_min += low
            out.prompt_tokens_max += high
            out.max_new_tokens += int(request.params.get("max_new_tokens") or 0)
        return out

    def _from_answers(self, study, model, requestset, path) -> SetCount | None:
        job = self.builders[path]
        answers, quoted = 0, 0
        quoting_bytes, template_words = OVERHEAD_PER_MESSAGE * 2 + OVERHEAD_PER_REQUEST, 0
        for f in job["input"]:
            match = _RESPONSES.search(f)
            if match:
                answered = self.count(*match.groups())
                if answered is None:
                    return None
                answers += answered.rows
                quoted += answered.row_new_tokens
            elif (self.root / f).is_file():
                quoting_bytes += _record_file_bytes(self.root / f)
                if f.endswith(".txt"):
                    text = (self.root / f).read_text(encoding="utf-8")
                    template_words += sum(1 for w in text.split() if "{" not in w)
        per_request = self._new_tokens_per_request(study, model, requestset, path)
        optional = optional_set(requestset)
        cacheable = get_backend(self.models[model]["backend"]).cacheable
        cached = len(self.cached(model)) if cacheable else 0
        at_least = 0 if optional else max(0, answers - cached)
        return SetCount(
            rows=answers,
            row_new_tokens=answers * per_request,
            requests_min=at_least,
            requests_max=answers,
            prompt_tokens_min=at_least * template_words,
            prompt_tokens_max=answers * quoting_bytes + quoted * QUOTED_BYTES_PER_TOKEN,
            max_new_tokens=answers * per_request,
            estimated=True,
            optional=optional,
        )

    def _new_tokens_per_request(self, study, model, requestset, path) -> int:
        """The set's limit as the study builds it (else its earlier file's), the model's cap
        applied."""
        cap = self.models[model].get("max_new_tokens")
        limit = None
        if study in self.studies:
            limit = contract.new_tokens(study, self.studies[study], requestset)
        if limit is None and (self.root / path).exists():
            for request in read_requests(self.root / path):
                limit = request.params.get("max_new_tokens")
                break
        if limit is None:
            return int(cap or 0)
        return min(int(limit), int(cap)) if cap else int(limit)


def estimate_rows(
    jobs, models: dict[str, dict], root=".", builders=None, studies=None, cache_dir=None
) -> list[dict]:
    """Calls, tokens and cost range per (model, study) of the ``generate`` jobs, then a
    total row per model (study ``all``) and overall (model and study ``all``)."""
    sets = RequestSets(models, root, builders, studies, cache_dir)
    acc: dict[tuple[str, str], dict] = defaultdict(
        lambda: {**dict.fromkeys(COUNTS, 0), "pending": []}
    )
    for study, model, requestset in jobs:
        row = acc[(model, study)]
        counted = sets.count(study, model, requestset)
        if counted is None:
            row["pending"].append(f"{requestset} (not counted yet)")
            continue
        if counted.estimated:
            note = "estimated from answers" + ("; optional" if counted.optional else "")
            row["pending"].append(f"{requestset} ({note})")
        for key in COUNTS:
            row[key] += getattr(counted, key)
    out = []
    for (model, study), row in sorted(acc.items()):
        cfg = models[model]
        backend = get_backend(cfg["backend"])
        low = backend.cost_bounds(cfg, row["prompt_tokens_min"], 0)[0]
        high = backend.cost_bounds(cfg, row["prompt_tokens_max"], row["max_new_tokens"])[1]
        batch_low = backend.batch_cost_bounds(cfg, row["prompt_tokens_min"], 0)[0]
        batch_high = backend.batch_cost_bounds(
            cfg, row["prompt_tokens_max"], row["max_new_tokens"]
        )[1]
        out.append(
            {
                "model": model,
                "study": study,
                **{key: row[key] for key in COUNTS},
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
        sums = {c: sum(r[c] for r in part) for c in COUNTS}
        for c in COSTS:
            costs = [r[c] for r in part]
            sums[c] = None if any(v is None or pd.isna(v) for v in costs) else sum(costs)
        return {"model": model, "study": TOTAL, **sums, "pending_request_sets": ""}

    if not rows:
        return rows
    out = []
    for model in dict.fromkeys(r["model"] for r in rows):
        part = [r for r in rows if r["model"] == model]
        out += [*part, total(part, model)]
    return [*out, total(rows, TOTAL)]


def _usd(value) -> str:
    if value is None or pd.isna(value):
        return "?"
    return f"{value:.0f}" if value >= 100 else f"{value:.2f}" if value >= 1 else f"{value:.4f}"


def _usd_range(low, high) -> str:
    if low is None or high is None or pd.isna(low) or pd.isna(high):
        return "not priced"
    return f"{_usd(low)}-{_usd(high)}"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "~"


# The terminal table: (header, width) per column; the rest is in estimate.tsv.
SHOWN = [("model", 20), ("study", 12), ("calls", 11), ("cached", 6), ("new tok <=", 10),
         ("cost USD", 17), ("batch USD", 17)]  # fmt: skip


def render(df: pd.DataFrame) -> str:
    """The estimate as the terminal shows it: one line per model and study, at most
    :data:`WIDTH` columns; prompt tokens and pending sets are in the TSV."""
    lines = textwrap.wrap(
        "Estimate before any model call: calls (requests not in the response cache), new "
        "tokens and cost, each from its least to its most (prompt tokens from the words to "
        "the bytes of the prompts; cost from each model's price, local models $0; batch: "
        "the same calls through the provider's Batch API at its batch price).",
        WIDTH,
    )
    if not len(df):
        return "\n".join([*lines, "(no generate jobs: nothing to call)"])
    lines.append(" ".join(f"{h:<{w}}" if i < 2 else f"{h:>{w}}" for i, (h, w) in enumerate(SHOWN)))
    for r in df.to_dict("records"):
        calls = f"{r['requests_min']}-{r['requests_max']}"
        cells = [
            _cut(str(r["model"]), 20),
            _cut(str(r["study"]), 12),
            calls,
            str(r["cached"]),
            str(r["max_new_tokens"]),
            _usd_range(r["cost_min_usd"], r["cost_max_usd"]),
            _usd_range(r["batch_cost_min_usd"], r["batch_cost_max_usd"]),
        ]
        lines.append(
            " ".join(
                f"{c:<{w}}" if i < 2 else f"{c:>{w}}"
                for i, (c, (_, w)) in enumerate(zip(cells, SHOWN, strict=True))
            )
        )
    notes = []
    if (df["pending_request_sets"].fillna("") != "").any():
        notes.append(
            "Judge and retry sets not built yet are estimated from answers (marked so in the "
            "TSV): at most one request per answer they judge; a retry set at least none."
        )
    unpriced = sorted(
        {
            m
            for m, c in zip(df["model"], df["cost_max_usd"], strict=True)
            if pd.isna(c) and m != TOTAL
        }
    )
    if unpriced:
        notes.append(
            f"No price set for API model(s) {', '.join(unpriced)}: add `price` to bound their cost."
        )
    notes.append(f"Prompt tokens and the sets per model and study: {ESTIMATE_TSV}.")
    for note in notes:
        lines += textwrap.wrap(note, WIDTH)
    return "\n".join(lines)


def snakemake(*args: str) -> subprocess.CompletedProcess:
    # No model is called: the models' API key variables need not be set.
    env = {**os.environ, NO_MODEL_CALLS_ENV: "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", *args], capture_output=True, text=True, env=env
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
    run = json.loads(Path(MODELS_JSON).read_text(encoding="utf-8"))
    rows = estimate_rows(
        generate_jobs(dry.stdout + dry.stderr),
        run["models"],
        builders=builders,
        studies=run["studies"],
        cache_dir=run["cache_dir"],
    )
    df = pd.DataFrame(rows, columns=COLUMNS)
    Path(ESTIMATE_TSV).write_text(
        df.to_csv(sep="\t", index=False, float_format="%.6g"), encoding="utf-8"
    )
    print(render(df))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
