"""What the `generate` jobs did: each job's outcome record, the end-of-run report of failed
calls, and each study's table of calls per model and request set."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..backends.failures import filtered
from ..core.records import read_responses


def outcome_path_for(log_path: str | os.PathLike) -> Path:
    """Where a `generate` job records its outcome: next to its log."""
    log_path = Path(log_path)
    return log_path.with_name(log_path.name.removesuffix(".log") + ".outcome.json")


def print_failed_calls(logs_dir: str | os.PathLike = "logs", since: float | None = None) -> None:
    """The end-of-run hook: print :func:`failed_calls_report` to stderr when anything failed."""
    import sys

    # A second's margin: file times and the run's start clock may round differently.
    summary = failed_calls_report(logs_dir, None if since is None else since - 1)
    if summary:
        print(summary, file=sys.stderr)


def failed_calls_report(logs_dir: str | os.PathLike = "logs", since: float | None = None) -> str:
    """Failed requests per model and study of the `generate` jobs run since ``since``.

    Called at the end of a run (the Snakefile's onsuccess/onerror hooks); empty when nothing
    failed. Batch-mode jobs that ended with batches still running are listed first. Each line names the model, the study, the failed and total requests and whether the
    failures were accepted (``max_failed_share``; counted as unscored in the tables) or stopped
    the job (the next plain rerun asks them again).
    """
    totals: dict[tuple[str, str], dict] = {}
    in_flight: list[str] = []
    for path in sorted(Path(logs_dir).glob("*/generate/*/*.outcome.json")):
        if since is not None and path.stat().st_mtime < since:
            continue  # from an earlier run
        try:
            row = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if row.get("in_flight"):  # a batch-mode job ended before its batches (backends.batch)
            in_flight.append(f"  {row['in_flight']}")
            continue
        if not row.get("errors"):
            continue
        entry = totals.setdefault(
            (row["model"], row["study"]),
            {
                "errors": 0,
                "requests": 0,
                "refused": [],
                "first_error": row.get("first_error"),
                "cures": [],
            },
        )
        entry["cures"] += [c for c in row.get("cures") or [] if c not in entry["cures"]]
        entry["errors"] += int(row["errors"])
        entry["requests"] += int(row["requests"])
        if not row.get("accepted", True):
            entry["refused"].append(row["requestset"])
    lines = []
    if in_flight:
        lines += ["Batches still running at the provider (a later run collects them):", *in_flight]
    if not totals:
        return "\n".join(lines)
    lines += ["Failed model calls in this run (per model and study):"]
    for (model, study), e in sorted(totals.items()):
        fate = (
            f"stopped request sets {', '.join(e['refused'])}"
            if e["refused"]
            else "accepted by max_failed_share, counted as unscored"
        )
        lines.append(
            f"  {model} / {study}: {e['errors']} of {e['requests']} requests failed; {fate}. "
            f"First error: {e['first_error']}"
        )
        if e["refused"]:
            lines += [f"    To fix: {c}." for c in e["cures"]]
    return "\n".join(lines)


CALLS_COLUMNS = [
    "model",
    "requestset",
    "n_requests",
    "n_failed",
    "n_truncated",
    "n_refused",
    "n_filtered",
    "n_cached",
    "n_other_model",
]


def calls_table(responses_root: str | os.PathLike, models, out_tsv, out_md=None):
    """Per model and request set of a study: requests, failed calls, truncated answers.

    ``n_failed`` counts error rows (failures accepted by ``max_failed_share``; they are unscored
    in the study's tables), ``n_truncated`` answers cut off at the token limit (``finish_reason``
    ``length``: scored as written when a model's answer, unusable when a judge's verdict),
    ``n_refused`` refusals (the provider's ``refusal`` field: kept as the answer's text and scored
    as written) and ``n_filtered`` calls the provider's content filter withheld (failed calls,
    also in ``n_failed``). A reply with no text (a content filter, null content) is a failed call.
    ``n_other_model`` counts answers whose server named another model than the one asked for
    (kept, and flagged in the row's ``other_model``).
    """
    import pandas as pd

    from ..core.io import write_table

    rows = []
    for model in sorted(models):
        for path in sorted((Path(responses_root) / model).glob("*.jsonl")):
            responses = read_responses(path)
            rows.append(
                {
                    "model": model,
                    "requestset": path.stem,
                    "n_requests": len(responses),
                    "n_failed": sum(r.error is not None for r in responses),
                    "n_truncated": sum(r.finish_reason == "length" for r in responses),
                    "n_refused": sum(bool(r.refused) for r in responses),
                    "n_filtered": sum(filtered(r) for r in responses),
                    "n_cached": sum(bool(r.cached) for r in responses),
                    "n_other_model": sum(bool(r.other_model) for r in responses),
                }
            )
    table = pd.DataFrame(rows, columns=CALLS_COLUMNS)
    write_table(
        table,
        out_tsv,
        out_md,
        title="Model calls per model and request set",
        notes=[calls_table.__doc__.split("\n\n")[1].strip().replace("\n    ", " ")],
    )
    return table
