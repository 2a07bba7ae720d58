"""Item-level response cache for the `generate` rule.

Layout: ``{cache_dir}/{model_id}/{job_name}.jsonl``, one JSON line per finished request,
``{"key": ..., "response": {...}}``. Each `generate` job appends only to its own file (its name is
derived from the job's study and request set), so two jobs never write one file, which keeps the
cache safe on a shared cluster filesystem. Lookups read every file of the model's folder, so a
request already answered by another job (same key) is reused too.

Lines are flushed and fsynced one by one: a job killed at any point loses at most the line it was
writing, and a torn last line is skipped on the next read. Failed calls are never cached, and
neither is a response that a read would refuse (:func:`cache_line_problem`: text that is not a
string, token counts or a cost that are not finite and non-negative). A line a read refuses (torn,
not UTF-8, of another shape, or with such numbers, written by hand or by an older version) is
skipped with a warning naming its file and line: its request is asked again, and no job of the
model stops on it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import time
from pathlib import Path

from ..core import credentials
from ..core.io import json_line
from ..core.records import Request, Response

log = logging.getLogger(__name__)


CANONICAL = {"sort_keys": True, "separators": (",", ":")}


def canonical_json(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, **CANONICAL)


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
    # surrogatepass: a judge request may quote a lone surrogate from a model's answer.
    return hashlib.sha256(canonical_json(payload).encode("utf-8", "surrogatepass")).hexdigest()


def cache_line_problem(row) -> str | None:
    """What is wrong with a decoded cache line, or None for ``{"key": str, "response": {...}}``."""
    if not isinstance(row, dict) or not isinstance(row.get("key"), str):
        return 'expected {"key": "<sha256>", "response": {...}}'
    response = row.get("response")
    if not isinstance(response, dict):
        return "response must be an object"
    if not isinstance(response.get("request_id"), str) or not isinstance(response.get("text"), str):
        return "response needs a request_id and a text string"
    for name in ("prompt_tokens", "completion_tokens", "cost_usd"):
        value = response.get(name)
        if value is not None and not _count(value):
            return f"{name} must be a finite number, 0 or more (not {value!r})"
    return None


def _count(value) -> bool:
    """A finite number, 0 or more (a token count or a cost)."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


class SpendLedger:
    """What the model's other jobs have paid for since this job started: the ``cost_usd`` of the
    answers appended to the model's other cache files, read a new tail at a time.

    Jobs of one model may run at once (``api_calls`` slots); each checks ``max_cost_usd`` between
    its rounds, and without this it would count only its own calls, so two jobs could together
    spend past the cap. Only whole lines are read (a line being written is read next time)."""

    def __init__(self, folder: Path, own: Path):
        self.folder, self.own = folder, own
        self.offsets = {f: f.stat().st_size for f in self._others()}

    def _others(self) -> list[Path]:
        return [f for f in sorted(self.folder.glob("*.jsonl")) if f != self.own]

    def new_spend(self) -> float:
        total = 0.0
        for file in self._others():
            start = self.offsets.get(file, 0)
            try:
                with open(file, "rb") as handle:
                    handle.seek(start)
                    tail = handle.read()
            except FileNotFoundError:
                continue
            whole = tail.rfind(b"\n") + 1
            self.offsets[file] = start + whole
            for line in tail[:whole].splitlines():
                try:
                    row = json.loads(line.decode("utf-8"))
                except (ValueError, RecursionError):
                    continue  # torn: load() reports it to the job that reads it
                if cache_line_problem(row) is None:  # a cost nobody can add is never counted
                    total += float(row["response"].get("cost_usd") or 0.0)
        return total


class ResponseCache:
    def __init__(self, cache_dir: str | os.PathLike, model_id: str, job_name: str):
        self.folder = Path(cache_dir) / model_id
        self.folder.mkdir(parents=True, exist_ok=True)
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in job_name)
        self.path = self.folder / f"{safe}.jsonl"
        self._handle = None

    def ledger(self) -> SpendLedger:
        """The other jobs' spend from now on (see :class:`SpendLedger`)."""
        return SpendLedger(self.folder, self.path)

    def load(self) -> dict[str, dict]:
        """Every cached response of this model, by key. A line that is torn, not JSON or not a
        cache entry is skipped with a warning naming file and line (its request is asked
        again): one bad line must not stop every job of the model."""
        entries: dict[str, dict] = {}
        for file in sorted(self.folder.glob("*.jsonl")):
            with open(file, "rb") as handle:
                for lineno, line in enumerate(handle, start=1):
                    try:
                        row = json.loads(line.decode("utf-8"))
                    except (ValueError, RecursionError):  # torn, not UTF-8, too deep: asked again
                        log.warning("skipping %s line %d: not a JSON line (torn?)", file, lineno)
                        continue
                    problem = cache_line_problem(row)
                    if problem:
                        log.warning(
                            "skipping %s line %d: not a cache entry (%s); its request is asked "
                            "again",
                            file,
                            lineno,
                            problem,
                        )
                        continue
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
        row = credentials.scrub_response(response).to_dict()  # never a key in the cache
        row.pop("cached", None)
        row.pop("meta", None)  # meta belongs to the request, which the key already covers
        problem = cache_line_problem({"key": key, "response": row})
        if problem:  # never stored: every later read would skip it (the backend checks first)
            log.warning("not caching the answer to %s: %s", response.request_id, problem)
            return
        # json_line: a lone surrogate in the answer is stored escaped and read back unchanged.
        self._handle.write(json_line({"key": key, "response": row}, **CANONICAL) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


class RequestClaims:
    """Claims on cache keys, so that jobs sharing a cache never pay twice for one request.

    A job claims a key before calling the model by creating ``.claims/{key}.json`` in the
    model's cache folder with ``O_CREAT | O_EXCL`` (atomic on local disks and on NFS v3+); the
    file records host, process id and start time, and its mtime is the heartbeat, refreshed by
    a thread every ``stale_after_s / 6`` seconds while the job holds it. The claim is released
    (the file removed) only after the answer is fsynced to the cache, or after the call failed.

    Another job that finds a key claimed waits for the answer. It takes the claim over when the
    holder is a dead process on this host, or when the claim's heartbeat has not changed for
    ``stale_after_s`` seconds (the config's ``claim_stale_s``) of the waiter's own clock (so
    clock skew between cluster nodes does not matter). A request whose holder was killed mid-call is therefore asked at most twice.
    """

    def __init__(self, folder: str | os.PathLike, stale_after_s: float):
        import socket
        import threading

        self.folder = Path(folder) / ".claims"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.stale_after_s = float(stale_after_s)
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self._held: set[str] = set()
        self._seen: dict[str, tuple[float, float]] = {}  # key -> (heartbeat seen, when first seen)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._beat = threading.Thread(target=self._heartbeat, daemon=True, name="claims")
        self._beat.start()

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.stale_after_s / 6):
            with self._lock:
                held = list(self._held)
            for key in held:
                try:
                    os.utime(self._path(key))
                except FileNotFoundError:
                    pass  # released meanwhile

    def acquire(self, key: str) -> bool:
        """Claim ``key``; False while another live job holds it."""
        path = self._path(key)
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            if not self._stale(key, path):
                return False
            # Take the stale claim over: only one waiter's rename succeeds.
            grave = path.with_name(f"{path.name}.stale.{self.host}.{self.pid}")
            try:
                os.rename(path, grave)
                grave.unlink()
            except FileNotFoundError:
                return False
            log.warning("took over the stale claim on %s", key[:12])
            return self.acquire(key)
        with os.fdopen(fd, "w") as handle:
            json.dump({"host": self.host, "pid": self.pid, "started": time.time()}, handle)
        with self._lock:
            self._held.add(key)
        self._seen.pop(key, None)
        return True

    def _stale(self, key: str, path: Path) -> bool:
        try:
            heartbeat = path.stat().st_mtime
        except FileNotFoundError:
            return False  # released: look again on the next round
        holder = _holder(path)
        if holder and holder.get("host") == self.host and not _alive(holder.get("pid")):
            return True
        now = time.monotonic()
        seen, since = self._seen.get(key, (None, now))
        if seen != heartbeat:
            self._seen[key] = (heartbeat, now)
            return False
        return now - since > self.stale_after_s

    def release(self, key: str) -> None:
        with self._lock:
            self._held.discard(key)
        try:
            self._path(key).unlink()
        except FileNotFoundError:
            pass

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            held, self._held = list(self._held), set()
        for key in held:
            try:
                self._path(key).unlink()
            except FileNotFoundError:
                pass


def _holder(path: Path) -> dict | None:
    """Who a claim file says holds it; None when it cannot be read (being written, or
    unreadable for good: then only its heartbeat can tell, and it goes stale like any other)."""
    try:
        holder = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return holder if isinstance(holder, dict) else None


def _alive(pid) -> bool:
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
