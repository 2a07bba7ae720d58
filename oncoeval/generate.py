"""The logic of the `generate` rule: one request set, one model, one responses file.

Cached answers are served without loading the model; the rest go to the backend, and each
finished answer is appended to the job's cache file at once, so a killed job resumes where it
stopped. Responses are written in request order, with the request's ``meta`` copied through.
"""

from __future__ import annotations

import logging
import os
import time

from tqdm import tqdm

from .backends import get_backend
from .cache import ResponseCache, cache_key
from .records import Request, Response, read_requests, write_responses

log = logging.getLogger(__name__)


def effective_params(request: Request, cfg: dict) -> dict:
    """Generation parameters as the model will see them (and as the cache key records them)."""
    params = dict(request.params)
    params.setdefault("temperature", 0.0)
    cap = cfg.get("max_new_tokens")
    if cap:
        params["max_new_tokens"] = min(int(params.get("max_new_tokens", cap)), int(cap))
    if float(params["temperature"]) == 0:
        # Greedy decoding ignores the seed and nucleus settings: keep them out of the key so
        # greedy requests that differ only there share one answer.
        for key in ("seed", "top_p", "top_k"):
            params.pop(key, None)
    for key, value in (cfg.get("generation") or {}).items():
        params.setdefault(key, value)
    return params


def spent_usd(rows) -> float:
    """USD recorded in response rows (dicts); rows without a price count as 0."""
    return float(sum(row.get("cost_usd") or 0.0 for row in rows))


def cap_reason(spent: float, cap: float) -> str:
    return f"max_cost_usd reached: ${spent:.4f} spent on this model of its ${cap:.4f} cap"


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


def run_generate(
    requests_path: str | os.PathLike,
    out_path: str | os.PathLike,
    model_cfg: dict,
    cache_dir: str | os.PathLike,
    study: str,
    requestset: str,
    threads: int = 1,
    progress: bool = True,
) -> dict:
    """Answer every request of ``requests_path`` with the model ``model_cfg``; return counts."""
    requests = read_requests(requests_path)
    backend_cls = get_backend(model_cfg["backend"])
    identity = backend_cls.identity(model_cfg)
    prepared = [
        Request(r.request_id, r.messages, effective_params(r, model_cfg), r.meta) for r in requests
    ]
    keys = {r.request_id: cache_key(model_cfg["backend"], identity, r, r.params) for r in prepared}

    cache = None
    stored: dict[str, dict] = {}
    if backend_cls.cacheable:
        cache = ResponseCache(cache_dir, model_cfg["id"], f"{study}--{requestset}")
        stored = cache.load()

    results: dict[str, Response] = {}
    for r in prepared:
        row = stored.get(keys[r.request_id])
        if row is not None:
            resp = Response.from_dict(row)
            resp.request_id, resp.model, resp.cached = r.request_id, model_cfg["id"], True
            results[r.request_id] = resp
    todo = [r for r in prepared if r.request_id not in results]
    log.info(
        "%s on %s/%s: %d requests, %d from cache, %d to generate",
        model_cfg["id"],
        study,
        requestset,
        len(prepared),
        len(results),
        len(todo),
    )

    cap = model_cfg.get("max_cost_usd")
    spent = spent_usd(stored.values())
    capped = None  # why the remaining calls were not made, once the spend cap is reached
    if cap is not None and todo and spent >= cap:
        capped = cap_reason(spent, cap)
    started = time.perf_counter()
    if todo and capped is None:
        backend = backend_cls(
            model_cfg, threads=threads, context={"study": study, "requestset": requestset}
        )
        # Under a spend cap, calls go out a round of `concurrency` at a time and the spend is
        # checked between rounds, so no call is sent once the cap is reached (a round in
        # flight is paid for, so its answers are kept).
        step = int(model_cfg.get("concurrency") or 1) if cap is not None else len(todo)
        try:
            with tqdm(
                total=len(todo), desc=f"generate {model_cfg['id']}", disable=not progress
            ) as bar:
                for start in range(0, len(todo), step):
                    for resp in backend.generate(todo[start : start + step]):
                        resp.model = model_cfg["id"]
                        if cache is not None:
                            cache.append(keys[resp.request_id], resp)
                        results[resp.request_id] = resp
                        bar.update(1)
                        spent += resp.cost_usd or 0.0
                    if cap is not None and spent >= cap:
                        capped = cap_reason(spent, cap)
                        break
        finally:
            backend.close()
            if cache is not None:
                cache.close()

    by_id = {r.request_id: r for r in prepared}
    missing = [r.request_id for r in prepared if r.request_id not in results]
    if capped:
        log.warning("%s: %s; %d calls not made", model_cfg["id"], capped, len(missing))
    for rid in missing:  # a backend that skipped a request is a bug; record it, do not drop it
        results[rid] = Response(
            rid, model_cfg["id"], None, error=capped or "backend returned no response"
        )
    ordered = []
    for r in prepared:
        resp = results[r.request_id]
        resp.meta = by_id[r.request_id].meta
        ordered.append(resp)
    write_responses(out_path, ordered)

    counts = {
        "requests": len(prepared),
        "cached": sum(r.cached for r in ordered),
        "generated": len(todo) - (len(missing) if capped else 0),  # calls made
        "errors": sum(r.error is not None for r in ordered),
        "seconds": round(time.perf_counter() - started, 3),
        # What this job's own calls used (cached answers cost nothing now).
        **usage_totals([r for r in ordered if not r.cached]),
    }
    log.info("done: %s", counts)
    return counts
