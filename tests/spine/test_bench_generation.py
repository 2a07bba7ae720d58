"""The generation benchmark's workload: every request distinct, so every mode decodes the same work.

The `generate` rule asks identical requests once and gives each copy the answer; with repeated
prompts the rule's row counted one answer's tokens several times (24 distinct prompts of 64 made
its tok/s 64/24 = 2.67x too high against the rows that decode every request).
"""

from __future__ import annotations

from bench.bench_generation import N_REQUESTS, build_requests


def test_the_benchmark_requests_are_all_distinct():
    texts = [r.messages[0]["content"] for r in build_requests(N_REQUESTS)]
    assert len(set(texts)) == len(texts) == N_REQUESTS
