"""File helpers shared by every stage: JSONL, TSV and Markdown tables, atomic writes."""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import logging
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from .credentials import ScrubbingStream, ScrubFilter
from .errors import InputError, OncoEvalError
from .format import markdown
from .inputs import loads_json

log = logging.getLogger(__name__)

# Surrogate code points: valid in JSON and in a Python str, but they have no UTF-8 form.
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def sha256_file(path: str | os.PathLike) -> str:
    """sha256 of a file, read in 1 MiB blocks (weights files are gigabytes)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def files_sha256(name: str, root: str | os.PathLike = ".") -> dict[str, str]:
    """sha256 of the file ``root/name``, or of every file inside that folder, keyed by the path
    as written (``name/inner/file``); {} when nothing is there."""
    path = Path(root) / name
    if path.is_file():
        return {name: sha256_file(path)}
    if path.is_dir():
        return {
            str(Path(name) / file.relative_to(path)): sha256_file(file)
            for file in sorted(p for p in path.rglob("*") if p.is_file())
        }
    return {}


@contextmanager
def held_lock(path: str | os.PathLike, holder: str) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the file ``path`` (created if missing) while the block runs;
    when another process or thread holds it, log that ``holder`` holds it and wait. The lock goes
    with the open file, so a holder that is killed releases it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("waiting for another job of this model that holds %s", holder)
            started = time.perf_counter()
            fcntl.flock(handle, fcntl.LOCK_EX)
            log.info("got %s after %.1f s", holder, time.perf_counter() - started)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w"):
    """Write to a temporary file beside ``path`` and rename it into place on success.

    A job killed mid-write leaves the previous file (or none), never a truncated one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # A lone surrogate from a model's answer (no UTF-8 form) is written as a visible escape
        # (\ud800) rather than failing the whole table.
        text_mode = "b" not in mode
        with os.fdopen(
            fd,
            mode,
            encoding="utf-8" if text_mode else None,
            errors="backslashreplace" if text_mode else None,
        ) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_jsonl(path: str | os.PathLike) -> list[dict]:
    """Read a JSONL file; a bad line raises InputError naming the file and line."""
    return list(iter_jsonl(path))


def iter_jsonl(path: str | os.PathLike) -> Iterator[dict]:
    for _, obj in iter_jsonl_lines(path):
        yield obj


def iter_jsonl_lines(path: str | os.PathLike) -> Iterator[tuple[int, dict]]:
    """(line number, object) of a JSONL file; a BOM is allowed, other bytes must be UTF-8."""
    with open(path, "rb") as handle:  # decoded line by line, so an encoding error names its line
        for lineno, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(
                    path,
                    f"line {lineno}",
                    f"not UTF-8 text (byte 0x{raw[exc.start]:02x}); save the file as UTF-8",
                ) from None
            if not line.strip():
                continue
            obj = loads_json(line, path, f"line {lineno}")  # strict: inputs.decode_json
            if not isinstance(obj, dict):
                raise InputError(path, f"line {lineno}", "expected a JSON object")
            yield lineno, obj


def json_line(obj, **kwargs) -> str:
    """``obj`` as JSON text that is valid UTF-8: non-ASCII characters as themselves, unless it
    holds a lone surrogate (a model may answer ``"\\ud800"``, which is valid JSON but no UTF-8);
    then every non-ASCII character is written as a ``\\u`` escape, which reads back unchanged."""
    text = json.dumps(obj, ensure_ascii=False, **kwargs)
    if _SURROGATE.search(text):
        return json.dumps(obj, ensure_ascii=True, **kwargs)
    return text


def text_without_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (a pair of surrogates is already one
    character in a Python string, so only lone ones are touched)."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def encodable_messages(messages: list[dict]) -> list[dict]:
    """Chat messages with each lone surrogate replaced by U+FFFD, which a tokenizer or an HTTP
    body can encode (a judge's request may quote one from a model's answer; the request file and
    its cache key keep it as it was)."""
    return [
        {**m, "content": _SURROGATE.sub("\ufffd", m["content"])}
        if isinstance(m.get("content"), str) and _SURROGATE.search(m["content"])
        else m
        for m in messages
    ]


def write_jsonl(path: str | os.PathLike, rows: Iterable[dict]) -> None:
    with atomic_write(path) as handle:
        for row in rows:
            handle.write(json_line(row) + "\n")


# How write_table writes a TSV (numbers to 6 significant digits).
TSV_FORMAT = {"sep": "\t", "index": False, "float_format": "%.6g"}


def as_written(df: pd.DataFrame, **read_csv_args) -> pd.DataFrame:
    """``df`` as a reader of its TSV (``write_table``) gets it back: numbers rounded as written,
    types as ``pandas.read_csv`` infers them (``read_csv_args``, e.g. ``dtype``). A stage that
    builds on a table it publishes uses this, so its numbers are the published ones."""
    return pd.read_csv(io.StringIO(df.to_csv(**TSV_FORMAT)), sep="\t", **read_csv_args)


def write_table(
    df: pd.DataFrame, tsv_path: str | os.PathLike, md_path=None, title=None, notes=None
):
    """Write a table as TSV and, when ``md_path`` is given, as a Markdown twin.

    In a capped smoke run (``limit``, handed to jobs as ONCOEVAL_ITEM_LIMIT) the Markdown twin
    says so under its title, so a table of five items is never read as a finding.
    """
    limit = os.environ.get("ONCOEVAL_ITEM_LIMIT")
    if limit:
        capped = (
            f"Capped run (limit={limit}): each study used only its first {limit} items; "
            "not a result."
        )
        title = f"{title}\n\n{capped}" if title else None
        notes = notes if title else [capped, *(notes or [])]
    with atomic_write(tsv_path) as handle:
        df.to_csv(handle, **TSV_FORMAT)
    if md_path is not None:
        with atomic_write(md_path) as handle:
            if title:
                handle.write(f"# {title}\n\n")
            # As every page shows a table: intervals folded, "–" for a missing value, headers
            # in words (oncoeval.core.format).
            handle.write(markdown(df))
            handle.write("\n")
            for note in notes or []:
                handle.write(f"\n{note}\n")


def cap_jsonl(path: str | os.PathLike, limit: int | None, group_by: str | None = None) -> int:
    """Keep only the first ``limit`` records of a JSONL file (per value of ``group_by``), in file
    order: the item cap of a smoke run (config key ``limit``). Returns the records kept."""
    rows = list(read_jsonl(path))
    if not limit:
        return len(rows)
    seen: dict = {}
    kept = []
    for row in rows:
        group = row.get(group_by) if group_by else None
        if seen.get(group, 0) < limit:
            seen[group] = seen.get(group, 0) + 1
            kept.append(row)
    write_jsonl(path, kept)
    logging.getLogger("oncoeval").info("limit=%d: kept %d of %d items", limit, len(kept), len(rows))
    return len(kept)


def read_tsv(path: str | os.PathLike) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", keep_default_na=True)


def setup_script_logging(log_path: str | os.PathLike | None) -> logging.Logger:
    """Send a script's logging and stderr to its Snakemake ``log:`` file."""
    logger = logging.getLogger("oncoeval")
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        stream = open(log_path, "w", encoding="utf-8", buffering=1)  # noqa: SIM115 (lives with the job)
        # Keys and URL credentials never reach the log, tracebacks included (oncoeval.core.credentials).
        sys.stderr = stream = ScrubbingStream(stream)
        handler = logging.StreamHandler(stream)
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(ScrubFilter())
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    sys.excepthook = report_uncaught
    return logger


def report_uncaught(exc_type, exc, tb) -> None:
    """A script's last word: the project's own errors (a bad input or setting, named with its
    file or key, record and cure) as their message alone, so that a clean stop does not read as a
    crash; anything else is a defect and keeps its traceback."""
    if issubclass(exc_type, OncoEvalError):
        print(f"{exc_type.__name__}: {exc}", file=sys.stderr, flush=True)
    else:
        sys.__excepthook__(exc_type, exc, tb)
