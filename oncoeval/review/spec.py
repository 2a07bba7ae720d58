"""A study's review, declared once (oncoeval.review.studies lists them)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd


def configured_labels(
    block: dict, key: str, root: Path, read: Callable[[Path], pd.DataFrame]
) -> pd.DataFrame | None:
    """The human-label file a study's ``key`` setting names (relative to the run's ``root``),
    read by the study's ``read``; None where the setting is empty or the file is not there yet."""
    path = block.get(key)
    if not path:
        return None
    path = Path(path) if Path(path).is_absolute() else root / path
    return read(path) if path.exists() else None


def write_json_records(records: list[dict], out: Path) -> None:
    out.write_text(json.dumps(records, indent=1, ensure_ascii=False), encoding="utf-8")


@dataclass(frozen=True)
class ScaleOption:
    value: int
    wording: str
    # what the page calls the label, where not its value (the chooser's "A" / "B")
    name: str = ""


@dataclass(frozen=True)
class ReviewStudy:
    """A study's review, declared once: what the page asks and shows, the labels' scale, and
    how the plan and the import reach the study's files."""

    name: str
    title: str
    question: str
    # key -> heading of each field the page shows per item (above the scale)
    fields: tuple[tuple[str, str], ...]
    # the label whose share the plan narrows (Cancer-Myth's PCR counts score 1)
    positive: int
    scale: Callable[[], list[ScaleOption]]
    # (config, root) -> the judged answers: item_id, stratum, answer_sha256, model, question_id
    # and the fields
    population: Callable[[dict, Path], pd.DataFrame]
    # (config, root) -> (judge verdict, human label is positive) of the labels collected so far
    collected_labels: Callable[[dict, Path], list]
    # (item, label, inclusion probability) -> one record of the study's human-label file
    human_record: Callable[[dict, int, float], dict]
    # (config, root) -> the labels of the study's human-label file that no plan drew (each
    # with an ``id``: a record of a drawn item is replaced by the import's)
    other_labels: Callable[[dict, Path], list[dict]]
    # the study's config key naming its human-label file, and the file the import writes
    labels_key: str = "human_scores"
    labels_file: str = "human_scores.json"
    # (records, out path) -> writes the human-label file in the format the study reads
    write_labels: Callable[[list[dict], Path], None] = write_json_records
    # what one planned item is, for the page's and the summary's wording
    unit: str = "answer"
    # key -> heading of the item's context, shown below the scale in scrolling boxes so that a
    # long list or profile keeps the scale on the first screen
    context: tuple[tuple[str, str], ...] = ()
    # keys items.jsonl keeps for the import that the page does not show
    hidden: tuple[str, ...] = ()
    # the rate the plan narrows, in the page's words ("" : the share of label ``positive``)
    rate: str = ""
    # the judge whose verdicts make the strata, as the report names it
    judge: str = "verifier"
    # the study's tables (under results/{study}/) whose rows the review status shows, and
    # (table paths -> rows of part, row, value, ci_low, ci_high, n, note) reading them
    status_tables: tuple[str, ...] = ()
    status_rows: Callable[[dict], list[dict]] = lambda tables: []
