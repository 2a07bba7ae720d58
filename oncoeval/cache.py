"""Item-level response cache for the `generate` rule.

Layout: ``{cache_dir}/{model_id}/{job_name}.jsonl``, one JSON line per finished request,
``{"key": ..., "response": {...}}``. Each `generate` job appends only to its own file (its name is
derived from the job's study and request set), so two jobs never write one file, which keeps the
cache safe on a shared cluster filesystem. Lookups read every file of the model's folder, so a
request already answered by another job (same key) is reused too.

Lines are flushed and fsynced one by one: a job killed at any point loses at most the line it was
writing, and a torn last line is skipped on the next read. Failed calls are never cached.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

from .errors import InputError
from .records import Request, Response

log = logging.getLogger(__name__)


def canonical_json(obj) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def cache_key(backend: str, identity: dict, request: Request, params: dict) -> str:
    """Hash of everything that determines a response: backend, model identity, messages, params.

    ``params`` are the effective generation parameters (request params merged with the model's
    own settings), so a seed, a temperature or a repetition penalty changes the key.
    """
    payload = {
        "backend": backend,
        "identity": identity,
        "messages": request.messages,
        "params": params,
    }
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def cache_line_problem(row) -> str | None:
    """What is wrong with a decoded cache line, or None for ``{"key": str, "response": {...}}``."""
    if not isinstance(row, dict) or not isinstance(row.get("key"), str):
        return 'expected {"key": "<sha256>", "response": {...}}'
    response = row.get("response")
    if not isinstance(response, dict):
        return "response must be an object"
    if not isinstance(response.get("request_id"), str) or not isinstance(response.get("text"), str):
        return "response needs a request_id and a text string"
    return None


class ResponseCache:
    def __init__(self, cache_dir: str | os.PathLike, model_id: str, job_name: str):
        self.folder = Path(cache_dir) / model_id
        self.folder.mkdir(parents=True, exist_ok=True)
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in job_name)
        self.path = self.folder / f"{safe}.jsonl"
        self._handle = None

    def load(self) -> dict[str, dict]:
        """Every cached response of this model, by key. Torn lines are skipped; a line that is
        JSON of another shape stops the job (InputError naming file and line) before any call."""
        entries: dict[str, dict] = {}
        for file in sorted(self.folder.glob("*.jsonl")):
            with open(file, "rb") as handle:
                for lineno, line in enumerate(handle, start=1):
                    try:
                        row = json.loads(line.decode("utf-8"))
                    except (UnicodeDecodeError, json.JSONDecodeError):  # torn: asked again
                        log.warning("skipping an unreadable cache line in %s", file)
                        continue
                    problem = cache_line_problem(row)
                    if problem:
                        raise InputError(file, f"line {lineno}", f"not a cache entry: {problem}")
                    entries[row["key"]] = row["response"]
        return entries

    def append(self, key: str, response: Response) -> None:
        if response.error is not None:
            return
        if self._handle is None:
            self._handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 (kept open for the job)
            # A job killed mid-line leaves a torn last line: start on a fresh line after it.
            if self._handle.tell() > 0:
                self._handle.seek(self._handle.tell() - 1)
                if self._handle.read(1) != "\n":
                    self._handle.write("\n")
        row = response.to_dict()
        row.pop("cached", None)
        row.pop("meta", None)  # meta belongs to the request, which the key already covers
        self._handle.write(canonical_json({"key": key, "response": row}) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
