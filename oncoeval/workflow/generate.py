"""The logic of the `generate` rule: one request set, one model, one responses file.

Cached answers are served without loading the model; the rest go to the backend, and each
finished answer is appended to the job's cache file at once, so a killed job resumes where it
stopped. Responses are written in request order, with the request's ``meta`` copied through.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import logging
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from tqdm import tqdm

from ..backends import failures, get_backend
from ..backends.base import CAP_REACHED
from ..backends.failures import cures
from ..core import credentials
from ..core.errors import InputError, OncoEvalError
from ..core.io import text_without_lone_surrogates
from ..core.records import (
    Request,
    Response,
    effective_params,
    read_requests,
    spent_usd,
    write_responses,
)
from ..core.schema import top_level_default
from ..models.cache import RequestClaims, ResponseCache, cache_key
from .waves import Sibling, engine_lock

log = logging.getLogger(__name__)


def cap_reason(spent: float, cap: float, estimated: int = 0) -> str:
    reason = f"{CAP_REACHED}: ${spent:.4f} spent on this model of its ${cap:.4f} cap"
    if estimated:
        reason += (
            f" ({estimated} answers counted at their worst case: the server reports no usable "
            "usage)"
        )
    return reason


def usage_totals(responses: list[Response]) -> dict:
    """Tokens and cost of ``responses`` (None where no response reported them)."""

    def total(values):
        known = [v for v in values if v is not None]
        return sum(known) if known else None

    cost = total([r.cost_usd for r in responses])
    return {
        "prompt_tokens": total([r.prompt_tokens for r in responses]),
        "completion_tokens": total([r.completion_tokens for r in responses]),
        "cost_usd": None if cost is None else round(cost, 6),
    }


class GenerationFailed(OncoEvalError, RuntimeError):
    """More requests of a job failed for good than ``max_failed_share`` allows (a clean stop:
    its message names the failure and the cure, with no traceback in the job's log)."""


def failed_share_allowed(model_cfg: dict, config: dict) -> float:
    """The model's own ``max_failed_share``, else the (filled) config's."""
    value = model_cfg.get("max_failed_share")
    return float(config["max_failed_share"] if value is None else value)


class SpendCap:
    """A model's ``max_cost_usd``: what its cache records as spent, and the calls it still allows.

    Under a cap, calls go out a round at a time (the backend's ``spend_round``: an API's
    ``concurrency``) and the spend is checked between rounds, so no call is sent once the cap is
    reached; a round in flight is paid for, so its answers are kept. The spend counts what other
    jobs of the model running at the same time have paid meanwhile (``ledger``), so jobs running
    at once overshoot the cap by at most their rounds in flight. Without a cap (or for a
    backend whose calls cost nothing) a batch goes out whole.
    """

    def __init__(self, model_cfg: dict, backend_cls, spent: float, ledger=None, estimated=0):
        self.model_id = model_cfg["id"]
        self.cap = model_cfg.get("max_cost_usd")
        self.round = backend_cls.spend_round(model_cfg) if self.cap is not None else None
        self.spent = spent
        # Other jobs of the model paying meanwhile (oncoeval.models.cache.SpendLedger); None: only
        # this job's calls are counted.
        self.ledger = ledger
        self.not_sent = 0  # requests refused by the cap
        self.estimated = estimated  # answers counted at their worst case (no usage reported)

    def send(self, batch: list[Request], call) -> Iterator[Response]:
        """Responses to ``batch``: ``call(requests)``'s answers, round by round, and a failed
        row for each request the cap refuses."""
        step = max(self.round or len(batch), 1)
        for start in range(0, len(batch), step):
            if self.ledger is not None:
                self.spent += self.ledger.new_spend()
            if self.cap is not None and self.spent >= self.cap:
                reason = cap_reason(self.spent, self.cap, self.estimated)
                log.warning("%s: %s; %d calls not made", self.model_id, reason, len(batch) - start)
                for r in batch[start:]:
                    self.not_sent += 1
                    yield Response(
                        r.request_id, self.model_id, None, error=reason, error_kind=failures.CAP
                    )
                return
            for resp in call(batch[start : start + step]):
                self.spent += resp.cost_usd or 0.0
                self.estimated += resp.cost_estimated
                yield resp


class LazyBackend:
    """The model, loaded on its first request (a job whose answers are all cached loads none)."""

    def __init__(self, backend_cls, model_cfg: dict, threads: int, context: dict):
        self.backend_cls, self.model_cfg = backend_cls, model_cfg
        self.threads, self.context = threads, context
        self.backend = None

    def generate(self, batch: list[Request]) -> Iterator[Response]:
        if self.backend is None:
            self.backend = self.backend_cls(
                self.model_cfg, threads=self.threads, context=self.context
            )
        # No answer or error row holds a key (a server that echoes the Authorization header).
        for resp in self.backend.generate(batch):
            yield credentials.scrub_response(resp)

    def close(self) -> None:
        if self.backend is not None:
            self.backend.close()


@dataclasses.dataclass
class JobRequests:
    """A job's requests as the model sees them, each with its cache key; one representative per
    distinct key (the others share its answer)."""

    prepared: list[Request]
    keys: dict[str, str]  # request id -> cache key
    distinct: dict[str, Request]  # cache key -> its first request

    @classmethod
    def read(cls, requests_path, model_cfg: dict, backend_cls) -> JobRequests:
        prepared = [
            Request(r.request_id, r.messages, effective_params(r, model_cfg), r.meta)
            for r in read_requests(requests_path)
        ]
        if backend_cls.cacheable:
            identity = backend_cls.identity(model_cfg)
            keys = {
                r.request_id: cache_key(model_cfg["backend"], identity, r, r.params)
                for r in prepared
            }
        else:  # replay answers by request id: each request is its own
            keys = {r.request_id: r.request_id for r in prepared}
        distinct: dict[str, Request] = {}
        for r in prepared:
            distinct.setdefault(keys[r.request_id], r)
        return cls(prepared, keys, distinct)

    def in_order(self, answers: dict[str, Response], model_id: str) -> list[Response]:
        """One response per request, in request order, with the request's ``meta``."""
        ordered = []
        for r in self.prepared:
            resp = answers.get(self.keys[r.request_id])
            if resp is None:  # a backend that skipped a request is a bug; record it, never drop
                resp = Response(
                    r.request_id,
                    model_id,
                    None,
                    error="backend returned no response",
                    error_kind=failures.OTHER,
                )
            # The cache keeps a lone surrogate as it came (escaped); the responses file, which
            # every later stage reads as text, carries U+FFFD in its place (oncoeval.core.io).
            text = None if resp.text is None else text_without_lone_surrogates(resp.text)
            ordered.append(
                dataclasses.replace(resp, request_id=r.request_id, meta=r.meta, text=text)
            )
        return ordered


@dataclasses.dataclass(frozen=True)
class GenerateSettings:
    """How a `generate` job runs, besides what it answers. ``max_failed_share`` and
    ``claim_stale_s`` default to the config schema's; ``outcome_path`` receives a small JSON record
    of the job (counts and first error) for the end-of-run report; ``siblings`` are the model's
    other request sets of this run (:func:`oncoeval.workflow.waves.siblings`)."""

    threads: int = 1
    progress: bool = True
    max_failed_share: float | None = None
    outcome_path: str | os.PathLike | None = None
    claim_stale_s: float | None = None
    siblings: Sequence[Sibling] = ()


def run_generate(
    requests_path: str | os.PathLike,
    out_path: str | os.PathLike,
    model_cfg: dict,
    cache_dir: str | os.PathLike,
    study: str,
    requestset: str,
    **settings,
) -> dict:
    """Answer every request of ``requests_path`` with the model ``model_cfg``; return counts.

    Requests with the same cache key are asked once and share the answer. When more than
    ``max_failed_share`` of the requests failed for good, the answers are kept in the cache but
    no responses file is written and :class:`GenerationFailed` is raised, so that a plain rerun
    asks exactly the failed requests again. Backends that call no model (replay) have no calls
    to fail: their unanswered requests stay error rows. ``settings`` are
    :class:`GenerateSettings` fields (a misspelt one is a TypeError).

    For a local model (hf, vllm), a job that loads the engine also answers the ``siblings``
    whose requests are built, into their own cache files, so that their jobs load nothing.
    """
    target = (requests_path, model_cfg, cache_dir, study, requestset)
    return Generation(*target, GenerateSettings(**settings)).run(out_path)


class Generation:
    """One `generate` job, step by step: serve what the cache holds (:meth:`from_cache`), ask
    the model the rest (:meth:`answer`: one request at a time, or :meth:`answer_by_batches`
    through a Batch API), let a loaded local engine answer the sibling request sets
    (:meth:`drain_siblings`), then write the responses and the outcome record (:meth:`finish`)."""

    def __init__(self, requests_path, model_cfg, cache_dir, study, requestset, settings):
        self.model_cfg, self.cache_dir = model_cfg, cache_dir
        self.study, self.requestset, self.settings = study, requestset, settings
        self.max_failed_share = settings.max_failed_share
        if self.max_failed_share is None:
            self.max_failed_share = top_level_default("max_failed_share")
        self.backend_cls = get_backend(model_cfg["backend"])
        self.job = JobRequests.read(requests_path, model_cfg, self.backend_cls)
        self.cache: ResponseCache | None = None
        self.answers: dict[str, Response] = {}  # by cache key
        self.todo: list[Request] = []  # distinct requests no answer is known for yet
        self.spend: SpendCap | None = None
        self.generated = 0

    def run(self, out_path) -> dict:
        self.from_cache()
        started = time.perf_counter()
        # A local model's engine is loaded by one job at a time (oncoeval.workflow.waves): a job that waited
        # for it finds what the holder answered in the cache.
        local = self.backend_cls.shares_engine and self.cache is not None
        lock = engine_lock(self.cache.folder) if self.todo and local else contextlib.nullcontext()
        with lock:
            if self.todo and local:
                self._take(self.cache.load())
                if not self.todo:
                    log.info("every request was answered while this job waited")
            if self.todo:
                self.answer(drain=local)
        return self.finish(out_path, started)

    def from_cache(self) -> None:
        """Serve the answers the cache holds; count the model's spend so far against its cap."""
        stored: dict[str, dict] = {}
        ledger = None
        if self.backend_cls.cacheable:
            name = f"{self.study}--{self.requestset}"
            self.cache = ResponseCache(self.cache_dir, self.model_cfg["id"], name)
            if self.model_cfg.get("max_cost_usd") is not None:
                # Other jobs' spend from here on; taken before the load, so an answer written
                # between the two counts twice against the cap rather than not at all.
                ledger = self.cache.ledger()
            stored = self.cache.load()  # every job of this model: its spend counts against the cap
        self._take(stored)
        log.info(
            "%s on %s/%s: %d requests (%d distinct), %d from cache, %d to generate",
            self.model_cfg["id"],
            self.study,
            self.requestset,
            len(self.job.prepared),
            len(self.job.distinct),
            len(self.answers),
            len(self.todo),
        )
        estimated = sum(bool(row.get("cost_estimated")) for row in stored.values())
        spent = spent_usd(stored.values())
        self.spend = SpendCap(self.model_cfg, self.backend_cls, spent, ledger, estimated)

    def _take(self, stored: dict[str, dict]) -> None:
        self.answers.update(_from_cache(stored, self.job.distinct))
        self.todo = [r for key, r in self.job.distinct.items() if key not in self.answers]

    def answer(self, drain: bool) -> None:
        """Ask the model every request of ``todo`` (each key claimed first, so that jobs running
        at once ask it once); with ``drain``, a loaded engine then answers the siblings."""
        claim_stale_s = self.settings.claim_stale_s
        if claim_stale_s is None:
            claim_stale_s = top_level_default("claim_stale_s")
        context = {"study": self.study, "requestset": self.requestset}
        model = LazyBackend(self.backend_cls, self.model_cfg, self.settings.threads, context)
        claims = RequestClaims(self.cache.folder, claim_stale_s) if self.cache is not None else None
        try:
            if self.backend_cls.batch_mode(self.model_cfg):
                self.answer_by_batches()
            bar = tqdm(
                total=len(self.todo),
                desc=f"generate {self.model_cfg['id']}",
                disable=not self.settings.progress,
            )
            with bar:
                call = functools.partial(self.spend.send, call=model.generate)
                for key, resp in _answer_all(self.todo, self.job.keys, call, self.cache, claims):
                    resp.model = self.model_cfg["id"]
                    self.generated += not resp.cached
                    self.answers[key] = resp
                    bar.update(1)
            if drain and model.backend is not None and self.settings.siblings:
                try:
                    self.drain_siblings(model, claims)
                except Exception:  # this job's own answers stand; the others ask again
                    log.exception("answering the other request sets failed")
        finally:
            for part in (claims, model, self.cache):
                if part is not None:
                    part.close()

    def answer_by_batches(self) -> None:
        """Answer ``todo`` through the provider's Batch API (oncoeval.backends.batch); put each
        answer or failed call into ``answers``; count the lines the provider answered. Raises
        :class:`~oncoeval.backends.batch.BatchesInFlight` when batches are still running after
        the model's ``batch_wait_s`` (their answers are collected by a later run), having
        recorded why in the job's outcome record for the end-of-run report."""
        from ..backends.batch import BatchesInFlight, BatchJob

        backend = self.backend_cls(self.model_cfg)
        try:
            batches = BatchJob(backend, self.cache, self.cache.path.stem, self.spend.spent)
            for key, resp in batches.run({self.job.keys[r.request_id]: r for r in self.todo}):
                resp.model = self.model_cfg["id"]
                self.answers[key] = credentials.scrub_response(resp)
        finally:
            backend.close()
        if batches.left:
            message = batches.in_flight_message(len(self.answers))
            outcome_path = self.settings.outcome_path
            if outcome_path is not None:
                Path(outcome_path).parent.mkdir(parents=True, exist_ok=True)
                record = {"model": self.model_cfg["id"], "in_flight": message}
                Path(outcome_path).write_text(json.dumps(record) + "\n")
            raise BatchesInFlight(message)
        self.generated += batches.calls
        self.todo = []

    def drain_siblings(self, model: LazyBackend, claims) -> int:
        """Answer, with the engine ``model`` already holds, every request of the ready siblings
        that no cache file has yet; each answer goes to the sibling's own cache file. Looks
        again after each pass (requests built meanwhile by other jobs are taken too). Returns
        the answers made. A sibling that cannot be read, or calls that fail, are left to its
        own job."""
        done: set[tuple[str, str]] = set()
        made = 0
        while True:
            ready = [
                s
                for s in self.settings.siblings
                if (s.study, s.requestset) not in done and s.ready()
            ]
            if not ready:
                return made
            for sib in ready:
                done.add((sib.study, sib.requestset))
                made += self._answer_sibling(sib, model, claims)

    def _answer_sibling(self, sib: Sibling, model: LazyBackend, claims) -> int:
        try:
            job = JobRequests.read(sib.requests, self.model_cfg, self.backend_cls)
        except (InputError, OSError, ValueError) as exc:
            log.warning("not answering %s/%s here: %s", sib.study, sib.requestset, exc)
            return 0
        name = f"{sib.study}--{sib.requestset}"
        cache = ResponseCache(self.cache_dir, self.model_cfg["id"], name)
        try:
            answered = _from_cache(cache.load(), job.distinct)
            todo = [r for key, r in job.distinct.items() if key not in answered]
            new = 0
            for _key, resp in _answer_all(todo, job.keys, model.generate, cache, claims):
                new += not resp.cached and resp.error is None
            log.info(
                "answered %d of %d requests of %s/%s for its own job (same engine)",
                new,
                len(todo),
                sib.study,
                sib.requestset,
            )
            return new
        finally:
            cache.close()

    def finish(self, out_path, started: float) -> dict:
        """The job's counts and outcome record; the responses file, unless too many failed."""
        ordered = self.job.in_order(self.answers, self.model_cfg["id"])
        counts = job_counts(self.job, ordered, self.model_cfg, self.study, self.requestset)
        counts["generated"] = self.generated - self.spend.not_sent  # calls made
        counts["seconds"] = round(time.perf_counter() - started, 3)
        outcome_path = self.settings.outcome_path
        return _finish(
            counts, ordered, self.backend_cls, self.max_failed_share, out_path, outcome_path
        )


def job_counts(job: JobRequests, ordered, model_cfg: dict, study: str, requestset: str) -> dict:
    """What a `generate` job did (its outcome record), besides calls made and seconds."""
    failed = [r for r in ordered if r.error is not None]
    return {
        "model": model_cfg["id"],
        "study": study,
        "requestset": requestset,
        "requests": len(job.prepared),
        "distinct": len(job.distinct),
        "cached": sum(r.cached for r in ordered),
        "generated": None,
        "errors": len(failed),
        "truncated": sum(r.finish_reason == "length" for r in ordered),
        "first_error": failed[0].error if failed else None,
        # What to do about them, one sentence per kind of failure (oncoeval.backends.failures).
        "cures": cures(failed, model_cfg, calls=sum(not r.cached for r in ordered)),
        "seconds": None,
        # What this job's own calls used (cached answers cost nothing now).
        **usage_totals([r for r in ordered if not r.cached]),
    }


def _finish(counts, ordered, backend_cls, max_failed_share, out_path, outcome_path) -> dict:
    """Record the outcome; write the responses, or refuse them when too many failed."""
    share = counts["errors"] / len(ordered) if ordered else 0.0
    refused = backend_cls.cacheable and share > max_failed_share
    counts["accepted"] = not refused
    if outcome_path is not None:
        Path(outcome_path).parent.mkdir(parents=True, exist_ok=True)
        Path(outcome_path).write_text(json.dumps(counts) + "\n")
    log.info("done: %s", counts)
    if refused:
        raise GenerationFailed(
            f"model {counts['model']!r}, study {counts['study']!r}, request set "
            f"{counts['requestset']!r}: {counts['errors']} of {len(ordered)} requests failed for "
            f"good ({share:.1%}; max_failed_share allows {max_failed_share:.1%}). First error: "
            f"{counts['first_error']}. The answered requests are in the cache. To fix: "
            f"{'; '.join(counts['cures'])}. To accept failures, raise max_failed_share (they are "
            "then counted as unscored)."
        )
    write_responses(out_path, ordered)
    return counts


def _from_cache(stored: dict[str, dict], distinct: dict[str, Request]) -> dict[str, Response]:
    found = {}
    for key in distinct:
        row = stored.get(key)
        if row is not None:
            resp = Response.from_dict(row)
            resp.cached = True
            found[key] = resp
    return found


def _answer_all(todo, keys, answer, cache, claims, poll_s: float = 0.25):
    """Yield ``(key, response)`` for every request of ``todo`` (one per distinct key).

    Without a cache every request goes to the model. With one, each key is claimed first; a
    key another job holds is waited for (its answer read from the cache) or, when that job
    failed on it or died, claimed and asked here.
    """
    if cache is None:
        for resp in answer(todo):
            yield keys[resp.request_id], resp
        return
    waiting = {keys[r.request_id]: r for r in todo}
    told, pause = False, poll_s
    while waiting:
        mine = [key for key in waiting if claims.acquire(key)]
        if mine:
            # Another job may have answered a key just before releasing it to us.
            for key, resp in _from_cache(cache.load(), {k: waiting[k] for k in mine}).items():
                claims.release(key)
                del waiting[key]
                yield key, resp
            batch = [waiting[key] for key in mine if key in waiting]
            for resp in answer(batch) if batch else ():
                key = keys[resp.request_id]
                cache.append(key, resp)
                claims.release(key)
                waiting.pop(key, None)
                yield key, resp
            for key in [keys[r.request_id] for r in batch]:
                if key in waiting:  # skipped by the backend: reported as an error row
                    claims.release(key)
                    del waiting[key]
            continue
        if not told:
            log.info("waiting for %d requests another job is asking", len(waiting))
            told = True
        time.sleep(pause)
        found = _from_cache(cache.load(), waiting)
        # Re-reading a large cache costs: look less often while nothing arrives (up to 2 s).
        pause = poll_s if found else min(2.0, pause * 1.5)
        for key, resp in found.items():
            del waiting[key]
            yield key, resp
