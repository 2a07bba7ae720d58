"""API throughput (issue #8, item 2): the `openai` backend against a local server.

500 requests, 100 ms server latency per call, at concurrency 1, 8 and 32; once with every call
answered and once with 10% of calls answered 429 (Retry-After 0.2 s). Reported: wall time as a
ratio of the ideal (target <= 1.25), failed requests (target 0),
server-side largest number in flight. The 429 variant is also run with one pool thread per slot
(``threads_per_slot = 1``), where a request sleeping before its retry keeps its slot idle: the
comparison shows what letting retries sleep outside the slots buys. Short runs are repeated and
their median reported (the machine is shared).

The ideal is the wall time of a client without overhead facing the same server: requests x
latency / concurrency when every call is answered. With 429s it counts the Retry-After waits
themselves: :func:`ideal_wall` schedules each request's observed 429s (answered at once, then a
Retry-After wait that holds no slot) and its answer (one latency in a slot) on ``concurrency``
slots, retries first, and returns when the last answer would arrive.
"""

from __future__ import annotations

import heapq
import os
import time
from pathlib import Path

from bench._fake_api import ServerProcess

N_REQUESTS = 500
LATENCY = 0.1
CONCURRENCIES = (1, 8, 32)
RATE_429 = 0.1
RETRY_AFTER = 0.2
TARGET = 1.25
# Short runs (1.6 s ideal at concurrency 32) are at the mercy of the shared machine's scheduler:
# repeat them and report the median (every repeat is kept in the JSON).
REPEATS = {1: 1, 8: 3, 32: 5}


def ideal_wall(rejections: list[int], latency: float, retry_after: float, slots: int) -> float:
    """When the last answer arrives with no client overhead (see the module docstring).

    ``rejections[i]`` is how many 429s request ``i`` got before its answer. A 429 takes no time
    in a slot; the request may try again ``retry_after`` later; its answer takes ``latency``.
    Whenever a slot frees, the earliest-ready attempt takes it (a retry before a first attempt
    ready at the same time; first attempts in request order).
    """
    free = [0.0] * slots  # when each slot is next free
    ready = [(0.0, 1, i, k) for i, k in enumerate(rejections)]  # (time, first?, request, 429s)
    heapq.heapify(ready)
    last = 0.0
    while ready:
        at, _, i, left = heapq.heappop(ready)
        start = max(at, heapq.heappop(free))
        if left:
            heapq.heappush(free, start)
            heapq.heappush(ready, (start + retry_after, 0, i, left - 1))
        else:
            heapq.heappush(free, start + latency)
            last = max(last, start + latency)
    return last


def _measure(url: str, concurrency: int, threads_per_slot: int = 2) -> dict:
    from oncoeval.backends.openai_api import Backend
    from oncoeval.core.records import Request
    from oncoeval.workflow.generate import effective_params

    os.environ.setdefault("ONCOEVAL_BENCH_KEY", "sk-bench-not-a-secret")
    cfg = {
        "id": "bench",
        "backend": "openai",
        "model": "bench-model",
        "base_url": url,
        "api_key_env": "ONCOEVAL_BENCH_KEY",
        "concurrency": concurrency,
        "timeout_s": 30,
        "max_retries": 6,
    }
    requests = []
    for i, prompt in enumerate(_prompts(concurrency)):
        req = Request(f"r{i}", [{"role": "user", "content": prompt}])
        requests.append(Request(req.request_id, req.messages, effective_params(req, cfg)))
    backend = Backend(cfg)
    backend.threads_per_slot = threads_per_slot
    started = time.perf_counter()
    responses = list(backend.generate(requests))
    wall = time.perf_counter() - started
    backend.close()
    return {
        "concurrency": concurrency,
        "threads_per_slot": threads_per_slot,
        "wall_s": round(wall, 3),
        "failed": sum(r.error is not None for r in responses),
        "responses": len(responses),
    }


def _prompts(concurrency: int) -> list[str]:
    return [f"question {i} at c{concurrency}" for i in range(N_REQUESTS)]


def _variant(rate_429: float, runs: list[tuple[int, int]]) -> list[dict]:
    rows = []
    with ServerProcess(LATENCY, rate_429=rate_429, retry_after=RETRY_AFTER) as server:
        _measure(server.url, 8)  # warm up: imports, first connections
        for concurrency, threads_per_slot in runs:
            repeats = []
            for _ in range(REPEATS[concurrency]):
                server.reset()
                row = _measure(server.url, concurrency, threads_per_slot)
                stats = server.stats()
                # 429s per request: the server's calls for its prompt beyond the one answered.
                rejections = [
                    stats["calls"].get(p, 1) - stats["answered"].get(p, 0)
                    for p in _prompts(concurrency)
                ]
                ideal = ideal_wall(rejections, LATENCY, RETRY_AFTER, concurrency)
                row.update(
                    ideal_s=round(ideal, 3),
                    ideal_without_429s_s=round(N_REQUESTS * LATENCY / concurrency, 3),
                    ratio=round(row["wall_s"] / ideal, 3),
                    rate_429=rate_429,
                    server_calls=stats["total_calls"],
                    server_429=int(stats["statuses"].get("429", 0)),
                    max_in_flight=stats["max_in_flight"],
                )
                repeats.append(row)
                print(row, flush=True)
            median = sorted(repeats, key=lambda r: r["ratio"])[len(repeats) // 2]
            rows.append({**median, "ratios": [r["ratio"] for r in repeats]})
    return rows


def run(out_dir: Path) -> dict:
    plain = _variant(0.0, [(c, 2) for c in CONCURRENCIES])
    limited = _variant(RATE_429, [(c, 2) for c in CONCURRENCIES] + [(8, 1), (32, 1)])
    rows = plain + limited
    summary = [
        f"`openai` backend, {N_REQUESTS} requests, {int(LATENCY * 1000)} ms per call on a local "
        f"server; ratio = wall / ideal, target <= {TARGET}. The ideal is requests x latency / "
        "concurrency, plus, with 429s, what the Retry-After waits the server asked for cost a "
        "client without overhead (bench/bench_api.py, ideal_wall).",
        "",
        "| 429s | concurrency | pool threads per slot | wall / ideal (median) | all repeats | failed | 429s answered | server max in flight |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        summary.append(
            f"| {int(r['rate_429'] * 100)}% | {r['concurrency']} | {r['threads_per_slot']} | "
            f"{r['ratio']:.2f}x | {', '.join(f'{x:.2f}' for x in r['ratios'])} | {r['failed']} | "
            f"{r['server_429']} | {r['max_in_flight']} |"
        )
    default_rows = [r for r in rows if r["threads_per_slot"] == 2]
    met = all(r["ratio"] <= TARGET and r["failed"] == 0 for r in default_rows)
    summary += [
        "",
        f"429s carry `Retry-After: {RETRY_AFTER}`. Target met (default settings): {'yes' if met else 'NO'}.",
    ]
    return {"rows": rows, "target": TARGET, "target_met": met, "summary": summary}
