"""Answering a `generate` job through an OpenAI-compatible Batch API (``batch: true``).

The requests of a job that are not in the cache go to the provider as batches (``/v1/files`` and
``/v1/batches``), at the batch price, in two steps:

- **submit**: the requests are split by the model's line and byte limits (``batch_max_lines``,
  ``batch_max_bytes``) and its enqueued-token budget (``batch_enqueued_tokens``), each part
  checked against ``max_cost_usd`` with its cost bound at the batch price, uploaded and created;
- **collect**: each batch is polled; once it has ended, every answered line goes into the item
  cache (same keys as synchronous answers: ``custom_id`` is the cache key), every line of its
  error file becomes a failed call with its message, and the lines an ``expired``, ``cancelled``
  or ``failed`` batch did not answer are submitted again (up to ``batch_max_resubmits`` times,
  then failed calls carrying the batch's reason). A batch refused for ``token_limit_exceeded``
  while others run is submitted again once one of them has ended, without counting as a
  resubmission (refused with none running, it counts: that batch alone is too large). The
  provider's files are deleted once a batch is collected.

Nothing lives only in memory. Each part of a job is written to the job's manifest
(``{cache}/{model}/.batches/{job}.json``) *before* each step that creates something at the
provider: ``uploading`` (its keys and a tag) -> ``creating`` (its file id) -> ``open`` (its batch
id) -> ``collected``. The uploaded file is named after the tag and the batch carries the tag in
its ``metadata``, so a job killed between an upload or a ``create`` and the manifest's next write
finds the file or batch again on its rerun (by listing them) instead of paying for it twice.

Two jobs of one model may share requests (same cache key). A job submits no key that is in an
unfinished part of any manifest of the model (another job's included): it waits for that job to
collect it and takes the answer from the cache. Deciding what to submit and recording the new
parts (``uploading``) happen under the model's submit lock (``.batches/.submit.lock``), so two
jobs never both decide to submit one key; the lock is not held while uploading or polling.

A job polls for ``batch_wait_s`` seconds; batches still running then are left at the provider and
the job ends with :class:`BatchesInFlight`, saying how to collect them: run the workflow again.
"""

from __future__ import annotations

import json
import logging
import math
import secrets
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from ..core.io import atomic_write, held_lock, json_line
from ..core.records import Request, Response, spent_usd
from . import failures
from .api import Answer, BadReply, Failure, cost_usd, message_text
from .base import CAP_REACHED

log = logging.getLogger(__name__)

ENDPOINT = "/v1/chat/completions"
TAG_KEY = "oncoeval_tag"  # the batch metadata entry naming its part of a manifest
ENDED = frozenset({"completed", "expired", "cancelled", "failed"})
TOKEN_LIMIT = "token_limit_exceeded"

# The model-entry keys of batch mode (all operational: none changes an answer).
SCHEMA = {
    "batch": {
        "description": (
            "Answer through the provider's Batch API (/v1/batches: about half the price, hours "
            "instead of seconds); the answers and cache keys are those of synchronous calls."
        ),
        "type": "boolean",
        "default": False,
    },
    "batch_max_lines": {
        "description": "Most requests in one batch (the provider's limit; OpenAI: 50000).",
        "type": "integer",
        "minimum": 1,
        "default": 50000,
    },
    "batch_max_bytes": {
        "description": "Largest batch input file in bytes (the provider's limit; OpenAI: 200 MB).",
        "type": "integer",
        "minimum": 1,
        "default": 200_000_000,
    },
    "batch_enqueued_tokens": {
        "description": (
            "Most tokens (prompt estimate plus max_new_tokens) in batches running at once; "
            "null for no budget."
        ),
        "type": ["integer", "null"],
        "minimum": 1,
        "default": None,
    },
    "batch_max_resubmits": {
        "description": (
            "Times a line an expired, cancelled or failed batch left unanswered is submitted "
            "again before it is a failed call."
        ),
        "type": "integer",
        "minimum": 0,
        "default": 2,
    },
    "batch_wait_s": {
        "description": (
            "Seconds a generate job waits for its batches; then it ends, leaving them running "
            "(a later run collects them)."
        ),
        "type": "number",
        "minimum": 0,
        "default": 600,
    },
    "batch_poll_s": {
        "description": "Seconds between two looks at the running batches.",
        "type": "number",
        "exclusiveMinimum": 0,
        "default": 30,
    },
    "batch_completion_window": {
        "description": "The completion window asked of the provider.",
        "type": "string",
        "default": "24h",
    },
}


def batch_price(price: dict | None) -> dict | None:
    """USD per 1000 tokens of batch calls: ``price.batch`` where set, else half of ``price``."""
    if not price:
        return None
    own = price.get("batch") or {}
    return {
        name: float(own[name]) if own.get(name) is not None else float(price.get(name, 0)) / 2
        for name in ("prompt_per_1k", "completion_per_1k")
    }


def estimated_tokens(request: Request) -> tuple[int, int]:
    """(prompt tokens ~ characters / 4, max new tokens) of one request."""
    chars = sum(len(str(m.get("content") or "")) for m in request.messages)
    return math.ceil(chars / 4), int(request.params.get("max_new_tokens") or 0)


class BatchesInFlight(RuntimeError):
    """A job ended while some of its requests are still in batches at the provider."""


class Manifest:
    """The job's parts at the provider, written atomically after every change."""

    def __init__(self, folder: Path, job_name: str):
        self.path = folder / ".batches" / f"{job_name}.json"
        self.parts: list[dict] = []
        self.tries: dict[str, int] = {}
        if self.path.exists():
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self.parts, self.tries = data["parts"], data["tries"]

    def save(self) -> None:
        with atomic_write(self.path) as handle:
            json.dump({"parts": self.parts, "tries": self.tries}, handle)

    def unfinished(self) -> list[dict]:
        return [p for p in self.parts if p["state"] != "collected"]

    def close_if_done(self) -> None:
        """Remove the manifest once every part is collected and its files deleted."""
        if all(p["state"] == "collected" and not p["files"] for p in self.parts):
            self.path.unlink(missing_ok=True)

    def others_unfinished(self) -> list[tuple[str, dict]]:
        """Unfinished parts of the model's other manifests (other jobs'), each with the name of
        the job whose manifest holds it.

        A manifest that cannot be read is logged and its parts are left out. That is safe:
        manifests are written only by ``atomic_write`` (whole or not at all), so such a file was
        damaged from outside, and its own job cannot read it either (it stops on it): nobody
        would ever collect the batches it records, so waiting on its keys would only keep this
        job waiting to the end of ``batch_wait_s`` on every run. Submitting them again loses
        nothing; at worst the provider answers a request that is already in one of that file's
        batches a second time."""
        found: list[tuple[str, dict]] = []
        for path in sorted(self.path.parent.glob("*.json")):
            if path == self.path:
                continue
            try:
                parts = json.loads(path.read_text(encoding="utf-8"))["parts"]
                unfinished = [p for p in parts if p["state"] != "collected"]
                for part in unfinished:
                    if not all(isinstance(k, str) for k in part["keys"]):
                        raise TypeError("a key is not a string")
                    # Their tokens and cost count against this model's budget and cap.
                    float(part["tokens"]), float(part["estimate_usd"])
            except FileNotFoundError:  # its job collected everything and removed it
                continue
            except (OSError, ValueError, LookupError, TypeError, AttributeError) as exc:
                log.warning(
                    "unreadable batch manifest %s (%s: %s): its requests are not taken as "
                    "running; any of them this job needs may be submitted again",
                    path,
                    type(exc).__name__,
                    exc,
                )
                continue
            found += [(path.stem, part) for part in unfinished]
        return found


class BatchJob:
    """The batch route of one `generate` job (see the module docstring).

    ``backend`` is the job's ``openai`` backend (its client, settings and key scrubbing),
    ``cache`` its :class:`~oncoeval.models.cache.ResponseCache`, ``spent`` what the model's cache records
    as paid (against ``max_cost_usd``).
    """

    def __init__(self, backend, cache, job_name: str, spent: float = 0.0):
        self.backend, self.client, self.cfg = backend, backend.client, backend.cfg
        self.cache = cache
        self.manifest = Manifest(cache.folder, job_name)
        self.price = batch_price(self.cfg.get("price"))
        self.cap = self.cfg.get("max_cost_usd")
        self.spent = spent
        self.in_flight: list[str] = []  # batch ids still running when the job ended
        self.left: list[str] = []  # keys not answered yet (in flight, or waiting for room)
        self.elsewhere: dict[str, str] = {}  # key -> the other job whose batch holds it
        self.calls = 0  # lines answered by the provider in this job

    # -- the job ----------------------------------------------------------------------------

    def run(self, todo: dict[str, Request]) -> Iterator[tuple[str, Response]]:
        """Yield ``(key, response)`` for each request of ``todo`` (by cache key) as it is
        answered or fails for good; keys still in batches when ``batch_wait_s`` is over are
        left out and their batch ids listed in ``in_flight``."""
        deadline = time.monotonic() + float(self.cfg["batch_wait_s"])
        waiting = dict(todo)
        for part in self.manifest.parts:  # collected before the job was killed
            if part["state"] == "collected" and part["files"]:
                self._delete_files(part)
        refused = False  # a batch was refused for the provider's enqueued-token limit
        while True:
            for part in self.manifest.unfinished():
                status = yield from self._advance(part, waiting)
                if status is not None:  # ended: room at the provider, unless it was refused
                    refused = status == TOKEN_LIMIT
            busy = {k for p in self.manifest.unfinished() for k in p["keys"]}
            pending = [key for key in waiting if key not in busy]
            # After a refusal, the lines wait until another running batch ends.
            if pending and not (refused and busy):
                yield from self._submit(pending, waiting)  # reads the cache too
            else:
                yield from self._answered_elsewhere(waiting)
            if not waiting:
                break
            if time.monotonic() >= deadline:
                break
            time.sleep(float(self.cfg["batch_poll_s"]))
        self.in_flight = [p.get("batch_id") or p["tag"] for p in self.manifest.unfinished()]
        self.left = list(waiting)
        self.manifest.close_if_done()

    def in_flight_message(self, answered: int) -> str:
        """What a job that ends with requests in batches tells the user."""
        mid = self.cfg["id"]
        jobs = Counter(self.elsewhere[key] for key in self.left if key in self.elsewhere)
        idle = "none of its own" if jobs else "none (waiting for the enqueued-token budget)"
        running = ", ".join(self.in_flight) or idle
        shared = "".join(
            f" {n} of them are in a batch of another job of this model, {job} (manifest "
            f"{self.manifest.path.parent / (job + '.json')}): that job collects them and this "
            "one then takes them from the cache."
            for job, n in jobs.items()
        )
        return (
            f"model {mid!r}, {self.manifest.path.stem}: {len(self.left)} requests are not "
            f"answered yet; batches still running at the provider: {running}.{shared} Nothing is "
            f"lost or paid twice: {answered} answers are in the cache, and the batches are "
            f"recorded in {self.manifest.path}. Run the workflow again (`make run`, or the same snakemake "
            "command) once they have ended (a batch may take up to "
            f"{self.cfg['batch_completion_window']}); that run collects them. "
            f"models[{mid}].batch_wait_s sets how long a job waits for them."
        )

    def _answered_elsewhere(
        self, waiting: dict, stored: dict | None = None
    ) -> Iterator[tuple[str, Response]]:
        """Keys another job answered meanwhile (a shared request), read from the cache (or
        ``stored``, the cache as just read)."""
        stored = self.cache.load() if stored is None else stored
        for key in [k for k in waiting if k in stored]:
            del waiting[key]
            resp = Response.from_dict(stored[key])
            resp.cached = True
            yield key, resp

    # -- submit -----------------------------------------------------------------------------

    def _line(self, key: str, request: Request) -> bytes:
        # The transport builds the body (batch is imported by it, not the other way round).
        body = self.backend.batch_body(request)
        row = {"custom_id": key, "method": "POST", "url": ENDPOINT, "body": body}
        return (json_line(row) + "\n").encode("utf-8", "surrogatepass")

    def _estimate(self, request: Request) -> tuple[int, float]:
        prompt, new = estimated_tokens(request)
        return prompt + new, cost_usd(self.price, prompt, new) or 0.0

    def _submit(self, pending: list[str], waiting: dict) -> Iterator[tuple[str, Response]]:
        """Submit the keys of ``pending`` that no job of the model has in a running batch and
        no job has answered, split into parts within the limits, the token budget and the spend
        cap. Requests the cap refuses are failed calls.

        Under the model's submit lock: read the other jobs' manifests, then the cache, plan the
        parts and record them (``uploading``) in this job's manifest. Another job deciding at
        the same time waits for the lock and then sees these keys as running. The cache is read
        after the manifests because a job appends its answers to the cache before it marks
        their part collected (or removes its manifest): a key no manifest holds any more is in
        the cache by then. Uploads and creates happen after the lock is released."""
        with held_lock(self.manifest.path.parent / ".submit.lock", "its batch submit lock"):
            others = self.manifest.others_unfinished()
            self.elsewhere = {key: job for job, part in others for key in part["keys"]}
            stored = self.cache.load()
            done = list(self._answered_elsewhere(waiting, stored))
            # What the model has paid for by now, other jobs' answers included.
            self.spent = max(self.spent, spent_usd(stored.values()))
            free = [k for k in pending if k in waiting and k not in self.elsewhere]
            capped: list[tuple[str, Response]] = []
            drafts = self._plan(free, waiting, capped, [p for _, p in others]) if free else []
            parts = self._record(drafts)
        yield from done
        yield from capped
        for part, draft in zip(parts, drafts, strict=True):
            self._upload(part, b"".join(draft["lines"]), recover=False)
            self._start(part, recover=False)

    def _plan(
        self, pending: list[str], waiting: dict, capped: list, others: list[dict]
    ) -> list[dict]:
        """The parts to submit for ``pending`` (see :meth:`_submit`); appends the keys the spend
        cap refuses, as failed calls, to ``capped``. ``others`` are the model's running parts
        in other jobs' manifests: their tokens count against the enqueued-token budget and
        their cost bound against the spend cap, as this job's own running parts do."""
        running = self.manifest.unfinished() + others
        budget = self.cfg.get("batch_enqueued_tokens")
        queued = sum(float(p["tokens"]) for p in running)
        committed = self.spent + sum(float(p["estimate_usd"]) for p in running)
        parts: list[dict] = []
        part = None
        for key in pending:
            tokens, usd = self._estimate(waiting[key])
            if self.cap is not None and committed + usd > float(self.cap):
                reason = (
                    f"{CAP_REACHED}: ${committed:.4f} spent or submitted on this model of its "
                    f"${float(self.cap):.4f} cap (batch price); not submitted"
                )
                capped.append((key, self._failed(key, reason, waiting, failures.CAP)))
                continue
            if budget is not None and queued > 0 and queued + tokens > budget:
                break  # the rest waits until running batches end
            line = self._line(key, waiting[key])
            if (
                part is None
                or len(part["keys"]) >= int(self.cfg["batch_max_lines"])
                or part["bytes"] + len(line) > int(self.cfg["batch_max_bytes"])
                or (budget is not None and part["tokens"] + tokens > budget)
            ):
                part = {"keys": [], "lines": [], "bytes": 0, "tokens": 0, "estimate_usd": 0.0}
                parts.append(part)
            part["keys"].append(key)
            part["lines"].append(line)
            part["bytes"] += len(line)
            part["tokens"] += tokens
            part["estimate_usd"] += usd
            queued += tokens
            committed += usd
        return parts

    def _record(self, drafts: list[dict]) -> list[dict]:
        """Add a part (``uploading``, with its keys and a tag) to the manifest for each draft;
        one manifest write for all of them."""
        parts = [
            {
                "tag": f"oncoeval-{secrets.token_hex(8)}",
                "state": "uploading",
                "keys": draft["keys"],
                "tokens": draft["tokens"],
                "estimate_usd": round(draft["estimate_usd"], 8),
                "files": [],
                "since": int(time.time()),
            }
            for draft in drafts
        ]
        if parts:
            self.manifest.parts += parts
            self.manifest.save()
        return parts

    def _uploaded(self, part: dict) -> list[str]:
        """Ids of the files uploaded for ``part`` (found by name: a job killed after the upload
        but before the manifest's next write left them)."""
        name = f"{part['tag']}.jsonl"
        return [f.id for f in self.client.files.list(purpose="batch") if f.filename == name]

    def _upload(self, part: dict, data: bytes, recover: bool) -> None:
        found = self._uploaded(part) if recover else []
        if found:
            file_id = found[0]
        else:
            file_id = self.client.files.create(
                file=(f"{part['tag']}.jsonl", data), purpose="batch"
            ).id
        part.update(state="creating", input_file_id=file_id, files=[file_id])
        self.manifest.save()

    def _created(self, part: dict):
        """The batch created for ``part`` by a job killed before the manifest recorded it, or
        None. Batches are listed newest first; those created before the part are not looked at."""
        for batch in self.client.batches.list(limit=100):
            if (batch.metadata or {}).get(TAG_KEY) == part["tag"]:
                return batch
            if batch.created_at < part["since"] - 60:  # a minute for clock differences
                return None
        return None

    def _start(self, part: dict, recover: bool) -> None:
        batch = self._created(part) if recover else None
        if batch is None:
            batch = self.client.batches.create(
                input_file_id=part["input_file_id"],
                endpoint=ENDPOINT,
                completion_window=self.cfg["batch_completion_window"],
                metadata={TAG_KEY: part["tag"], "model": str(self.cfg["id"])},
            )
        part.update(state="open", batch_id=batch.id)
        self.manifest.save()
        log.info("batch %s: %d requests submitted", batch.id, len(part["keys"]))

    # -- collect ----------------------------------------------------------------------------

    def _advance(self, part: dict, waiting: dict):
        """Move one unfinished part on (a generator: yields what its batch answered); returns
        None while its batch runs, else the batch's error code or its status."""
        if part["state"] == "uploading":
            lines = [self._line(key, waiting[key]) for key in part["keys"] if key in waiting]
            if len(lines) != len(part["keys"]):  # answered meanwhile: a new part for the rest
                part.update(state="collected", files=self._uploaded(part))
                self.manifest.save()
                self._delete_files(part)
                return "collected"
            self._upload(part, b"".join(lines), recover=True)
        if part["state"] == "creating":
            self._start(part, recover=True)
        if part["state"] == "open":
            batch = self.client.batches.retrieve(part["batch_id"])
            if batch.status not in ENDED:
                return None
            return (yield from self._collect(part, batch, waiting))
        return None

    def _collect(self, part: dict, batch, waiting: dict):
        answered: set[str] = set()
        stored = self.cache.load()
        for row in self._lines(batch.output_file_id):
            key = row.get("custom_id")
            if key in stored or key not in part["keys"]:
                answered.add(key)
                continue
            resp = self._response(key, row, waiting)
            self.cache.append(key, resp)
            self.spent += resp.cost_usd or 0.0
            self.calls += 1
            answered.add(key)
            if key in waiting:
                del waiting[key]
                yield key, resp
        for row in self._lines(batch.error_file_id):
            key = row.get("custom_id")
            answered.add(key)
            if key in waiting:
                kind, status = line_failure(row)
                yield (
                    key,
                    self._failed(
                        key, f"batch line error: {line_error(row)}", waiting, kind, status
                    ),
                )
        code = error_code(batch)
        missing = [k for k in part["keys"] if k not in answered and k in waiting]
        if missing:
            log.warning(
                "batch %s %s (%s): %d of %d lines unanswered",
                batch.id,
                batch.status,
                code or "no reason given",
                len(missing),
                len(part["keys"]),
            )
        others_running = any(p is not part for p in self.manifest.unfinished())
        for key in missing:
            if code == TOKEN_LIMIT and others_running:
                continue  # submitted again once earlier batches end; not a resubmission
            self.manifest.tries[key] = self.manifest.tries.get(key, 0) + 1
            if self.manifest.tries[key] > int(self.cfg["batch_max_resubmits"]):
                reason = f"batch {batch.id} {batch.status}"
                reason += f" ({code}: {error_message(batch)})" if code else ""
                yield (
                    key,
                    self._failed(
                        key,
                        f"{reason}; line unanswered after resubmissions",
                        waiting,
                        failures.SERVER,
                    ),
                )
        part["files"] = [f for f in (batch.output_file_id, batch.error_file_id) if f] + part[
            "files"
        ]
        part["state"] = "collected"
        part["status"] = batch.status
        self.manifest.save()
        self._delete_files(part)
        return code or batch.status

    def _lines(self, file_id: str | None) -> list[dict]:
        if not file_id:
            return []
        text = self.client.files.content(file_id).text
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def _delete_files(self, part: dict) -> None:
        import openai

        for file_id in list(part["files"]):
            try:
                self.client.files.delete(file_id)
            except openai.NotFoundError:
                pass
            part["files"].remove(file_id)
            self.manifest.save()

    # -- responses ----------------------------------------------------------------------------

    def _failed(
        self, key: str, reason: str, waiting: dict, kind: str, status: int | None = None
    ) -> Response:
        request = waiting.pop(key)
        log.warning("request %s failed: %s", request.request_id, reason)
        return Response(
            request.request_id,
            self.cfg["id"],
            None,
            error=self.backend.scrub(reason),
            error_kind=kind,
            error_status=status,
        )

    def _response(self, key: str, row: dict, waiting: dict) -> Response:
        """A cache row from one answered line, checked as a synchronous answer is
        (``ApiBackend.response_of``: text, length, usage, served model)."""
        body = row["response"]["body"]
        choice = body["choices"][0]
        message = choice.get("message") or {}
        request = waiting.get(key) or Request(key, [])
        try:
            text = message_text(message.get("content"))
        except BadReply as exc:
            log.warning("request %s failed: BadReply: %s", request.request_id, exc)
            return Response(
                request.request_id,
                self.cfg["id"],
                None,
                error=f"BadReply: {exc}",
                error_kind=failures.BAD_REPLY,
            )
        refusal = message.get("refusal")
        refused = text is None and isinstance(refusal, str) and bool(refusal)
        if refused:
            text = refusal
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        served = body.get("model")
        answer = Answer(
            text,
            finish_reason=choice.get("finish_reason"),
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            refused=refused,
            served_model=served if isinstance(served, str) else None,
        )
        return self.backend.response_of(request, answer, self.price, None)


def error_code(batch) -> str | None:
    data = getattr(batch.errors, "data", None) or []
    return getattr(data[0], "code", None) if data else None


def error_message(batch) -> str:
    data = getattr(batch.errors, "data", None) or []
    return str(getattr(data[0], "message", "")) if data else ""


def line_failure(row: dict) -> tuple[str, int | None]:
    """(kind, HTTP status) of one line of a batch's error file (a 401 is the key's, as in a
    synchronous call; any other, or none, the server's)."""
    status = (row.get("response") or {}).get("status_code")
    if isinstance(status, int) and not isinstance(status, bool):
        return Failure(status).kind, status
    return failures.SERVER, None


def line_error(row: dict) -> str:
    """The message of one line of a batch's error file."""
    if row.get("error"):
        error = row["error"]
        return f"{error.get('code')}: {error.get('message')}"
    response = row.get("response") or {}
    error = (response.get("body") or {}).get("error") or {}
    return f"HTTP {response.get('status_code')}: {error.get('message', 'no message')}"
