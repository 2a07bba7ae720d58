"""Local generation throughput (issue #8, item 1): the `hf` backend on the embedded SmolLM2.

One run, side by side, at ``THREADS`` CPU threads, on ~64 requests of ~150 prompt tokens and 128
new tokens, with the default config's model entry (fp32, repetition_penalty 1.2):

- ``one_by_one``: ``transformers.generate`` on one request at a time (the baseline);
- ``hf_generate``: ``transformers.generate`` on left-padded, length-sorted static batches of the
  default batch size (what the backend did before its own decode loop);
- ``backend``: the backend's continuous-batching loop at batch sizes 1-32;
- ``hf_continuous``: transformers' own continuous batching (``engine: continuous``, paged KV
  cache) at the default batch size, the library anchor. It does not support the repetition
  penalty, so the backend would send these requests to ``static``; this row runs them without
  the penalty (the same cost per token);
- ``rule``: ``oncoeval.workflow.generate.run_generate`` (the body of the `generate` rule: model load,
  cache, response file) at the default config's batch size;
- ``hf_generate_mixed`` / ``backend_mixed``: the same requests with caps of 16, 32, 64 and 128
  new tokens in turn (a study's answers differ in length: a JSON label, a list, a narrative),
  at the default batch size. The caps stand in for answers that end at different points (at
  EOS), which no batcher knows in advance. A static batch runs to its longest cap and its
  finished rows idle; the loop refills them. Only tokens within each request's own cap count;
- ``llama_cpp``: llama.cpp single stream on the same GGUF, through ``llama-cpp-python`` when it
  is importable here or in ``$ONCOEVAL_BENCH_LLAMA_PYTHON`` (default ``/work/bench-venv``);
  skipped otherwise. It is never a dependency of the project.

Tokens/s counts new tokens over wall time including prefill. Peak memory is the process's
peak RSS during each measurement (sampled every 20 ms). Small batch sizes run on fewer requests
(the rate needs no more), set by ``ONCOEVAL_BENCH_REQUESTS`` (default 64) as the cap.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

# As the hf backend does before torch loads (see oncoeval.backends.hf.passive_openmp_threads);
# every mode below runs under the same policy.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

REPO = Path(__file__).resolve().parents[1]
THREADS = int(os.environ.get("ONCOEVAL_BENCH_THREADS", "2"))
N_REQUESTS = int(os.environ.get("ONCOEVAL_BENCH_REQUESTS", "64"))
NEW_TOKENS = 128
BATCH_SIZES = (1, 2, 4, 8, 16, 32)
MIXED_CAPS = (16, 32, 64, 128)
LLAMA_PYTHON = os.environ.get("ONCOEVAL_BENCH_LLAMA_PYTHON", "/work/bench-venv/bin/python")

TOPICS = [
    "whole-breast radiotherapy after lumpectomy",
    "adjuvant chemotherapy with docetaxel and cyclophosphamide",
    "stereotactic radiosurgery for a single brain metastasis",
    "androgen deprivation therapy with pelvic radiotherapy",
    "immunotherapy with pembrolizumab for metastatic melanoma",
    "concurrent chemoradiation for locally advanced cervical cancer",
    "proton therapy for a paediatric medulloblastoma",
    "FOLFOX after resection of stage III colon cancer",
]
DETAILS = [
    "The patient is a retired teacher who lives alone and drives herself to appointments.",
    "Her blood counts were normal before treatment and she has no history of heart disease.",
    "He has mild type 2 diabetes controlled with metformin and walks every morning.",
    "The care team wants a plain-language handout that a family member can read as well.",
    "Previous treatments included surgery six weeks ago, and the wound has healed well.",
    "The clinic offers a nurse telephone line during office hours and an emergency number.",
]


def model_entry() -> dict:
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    return next(m for m in config["models"] if m["id"] == "smollm2")


def build_requests(n: int):
    """Deterministic oncology questions of ~120-180 prompt tokens (chat template included)."""
    from oncoeval.core.records import Request

    requests = []
    for i in range(n):
        lines = [DETAILS[(i + k) % len(DETAILS)] for k in range(3 + i % 4)]
        # The case number keeps every prompt distinct: the rule asks identical requests once,
        # so repeated prompts would count one answer's tokens several times.
        text = (
            f"Case {i + 1}: a patient is about to start {TOPICS[i % len(TOPICS)]}. "
            + " ".join(lines)
            + " Write a numbered list of the side effects they may notice in the first weeks,"
            " and say for each one when they should call the clinic."
        )
        requests.append(
            Request(
                f"q{i:03d}",
                [{"role": "user", "content": text}],
                {"temperature": 0.0, "max_new_tokens": NEW_TOKENS},
            )
        )
    return requests


class PeakRSS:
    """Peak resident memory of this process while the block runs (sampled)."""

    def __enter__(self):
        self.peak = self._rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._rss())

    @staticmethod
    def _rss() -> int:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def _watch(self):
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, self._rss())

    @property
    def mb(self) -> float:
        return round(self.peak / 2**20, 1)


def measure(label: str, fn, **info) -> dict:
    load_before = os.getloadavg()[0]
    with PeakRSS() as mem:
        started = time.perf_counter()
        tokens, extra = fn()
        seconds = time.perf_counter() - started
    row = {
        "mode": label,
        **info,
        "new_tokens": tokens,
        "seconds": round(seconds, 2),
        "tok_s": round(tokens / seconds, 2),
        "peak_rss_mb": mem.mb,
        "loadavg_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        **extra,
    }
    print(json.dumps(row), flush=True)
    return row


def run_llama_cpp(gguf: str, prompts: list[list[int]], eos: int) -> dict:
    """llama.cpp single stream, in this interpreter or the benchmark venv; {} if unavailable."""
    script = Path(__file__).with_name("llama_cpp_stream.py")
    payload = json.dumps(
        {"gguf": gguf, "prompts": prompts, "eos": eos, "threads": THREADS, "new": NEW_TOKENS}
    )
    candidates = [sys.executable]
    if Path(LLAMA_PYTHON).is_file():
        candidates.append(LLAMA_PYTHON)
    for python in candidates:
        probe = subprocess.run([python, "-c", "import llama_cpp"], capture_output=True)
        if probe.returncode != 0:
            continue
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
            handle.write(payload)
        try:
            proc = subprocess.run(
                [python, str(script), handle.name], capture_output=True, text=True, timeout=3600
            )
        finally:
            os.unlink(handle.name)
        if proc.returncode != 0:
            return {"skipped": f"llama.cpp run failed: {proc.stderr[-500:]}"}
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        result["python"] = python
        return result
    return {
        "skipped": "llama-cpp-python is not installed (here or in $ONCOEVAL_BENCH_LLAMA_PYTHON)"
    }


def run(out_dir: Path) -> dict:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("ONCOEVAL_MODEL_STORE", str(REPO / "cache" / "models"))
    import torch

    from oncoeval.backends.hf import Backend, resolve_weights
    from oncoeval.core.records import write_requests
    from oncoeval.workflow.generate import run_generate

    torch.set_num_threads(THREADS)
    cfg = model_entry()
    default_batch = int(cfg.get("batch_size", 8))
    generation = dict(cfg.get("generation") or {})
    requests = [
        type(r)(r.request_id, r.messages, {**r.params, **generation}, r.meta)
        for r in build_requests(N_REQUESTS)
    ]
    backend = Backend(cfg, threads=THREADS)
    tokenizer, model = backend.tokenizer, backend.model
    prompts = [backend._prompt_ids(r) for r in requests]
    eos = backend._eos_ids()
    rows: list[dict] = []

    def subset(batch_size: int) -> int:
        return min(N_REQUESTS, max(4, 2 * batch_size))

    def hf_generate(n: int, batch_size: int, caps: list[int] | None = None):
        caps = caps or [NEW_TOKENS] * n

        def go():
            tokens = 0
            order = sorted(range(n), key=lambda i: len(prompts[i]))
            for start in range(0, n, batch_size):
                members = order[start : start + batch_size]
                chunk = [prompts[i] for i in members]
                width = max(map(len, chunk))
                pad = tokenizer.pad_token_id
                ids = torch.tensor([[pad] * (width - len(p)) + p for p in chunk])
                mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in chunk])
                with torch.inference_mode():
                    out = model.generate(
                        input_ids=ids,
                        attention_mask=mask,
                        max_new_tokens=max(caps[i] for i in members),
                        do_sample=False,
                        pad_token_id=pad,
                        **generation,
                    )
                for i, row in zip(members, out[:, width:].tolist(), strict=True):
                    row = row[: caps[i]]
                    tokens += next((k for k, t in enumerate(row) if t in eos), len(row))
            return tokens, {}

        return go

    def continuous(n: int, batch_size: int):
        from oncoeval.backends.decoding import DecodeParams, Job
        from oncoeval.backends.engines import ContinuousBatches

        def go():
            engine = ContinuousBatches(model, eos, tokenizer.pad_token_id, batch_size)
            jobs = [
                Job(i, p, DecodeParams(max_new_tokens=NEW_TOKENS))
                for i, p in enumerate(prompts[:n])
            ]
            return sum(len(j.tokens) for j in engine.run(jobs)), {}

        return go

    def through_backend(n: int, batch_size: int, todo=None):
        def go():
            backend.batch_size = batch_size
            responses = list(backend.generate((todo or requests)[:n]))
            assert all(r.error is None for r in responses), responses[0].error
            return sum(r.completion_tokens for r in responses), dict(backend.last_stats)

        return go

    n1 = subset(1)
    rows.append(measure("one_by_one", hf_generate(n1, 1), batch_size=1, requests=n1))
    n = subset(default_batch)
    rows.append(
        measure("hf_generate", hf_generate(n, default_batch), batch_size=default_batch, requests=n)
    )
    rows.append(
        measure(
            "hf_continuous",
            continuous(n, default_batch),
            batch_size=default_batch,
            requests=n,
        )
    )
    for batch_size in BATCH_SIZES:
        n = subset(batch_size)
        rows.append(
            measure("backend", through_backend(n, batch_size), batch_size=batch_size, requests=n)
        )
    # Answers of different lengths, where continuous batching pays.
    n = N_REQUESTS
    caps = [MIXED_CAPS[i % len(MIXED_CAPS)] for i in range(n)]
    mixed = [
        type(r)(r.request_id, r.messages, {**r.params, "max_new_tokens": cap}, r.meta)
        for r, cap in zip(requests, caps, strict=True)
    ]
    for label, fn in (
        ("hf_generate_mixed", hf_generate(n, default_batch, caps)),
        ("backend_mixed", through_backend(n, default_batch, mixed)),
    ):
        rows.append(measure(label, fn, batch_size=default_batch, requests=n))
    backend.close()

    # The generate rule's own code path, model load and response cache included.
    with tempfile.TemporaryDirectory() as tmp:
        request_file = Path(tmp) / "bench.jsonl"
        write_requests(request_file, build_requests(N_REQUESTS))

        def rule():
            counts = run_generate(
                request_file,
                Path(tmp) / "out.jsonl",
                cfg,
                Path(tmp) / "cache",
                "bench",
                "bench",
                threads=THREADS,
                progress=False,
            )
            lines = (Path(tmp) / "out.jsonl").read_text().splitlines()
            tokens = sum(json.loads(line)["completion_tokens"] for line in lines)
            # Every request was decoded (none answered as a copy of another).
            assert counts["generated"] == len(lines) == N_REQUESTS, counts
            return tokens, {"errors": counts["errors"]}

        rows.append(measure("rule", rule, batch_size=default_batch, requests=N_REQUESTS))

    folder, gguf_file = resolve_weights(cfg)
    n_llama = subset(1)
    llama = run_llama_cpp(str(Path(folder) / gguf_file), prompts[:n_llama], eos[0])
    if "tok_s" in llama:
        llama.update(mode="llama_cpp", batch_size=1, requests=n_llama)
        rows.append(llama)

    return {
        "threads": THREADS,
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
        "new_tokens": NEW_TOKENS,
        "prompt_tokens": {"min": min(map(len, prompts)), "max": max(map(len, prompts))},
        "default_batch_size": default_batch,
        "rows": rows,
        "llama_cpp": llama if "tok_s" not in llama else "see rows",
        "summary": summarise(rows, llama, default_batch),
    }


def summarise(rows: list[dict], llama: dict, default_batch: int) -> list[str]:
    base = next(r["tok_s"] for r in rows if r["mode"] == "one_by_one")
    ref = llama.get("tok_s")
    lines = [
        f"SmolLM2-135M fp32, {THREADS} threads, {NEW_TOKENS} new tokens, prompts of "
        "~120-180 tokens. Ratios are to one-by-one `transformers.generate` and to llama.cpp "
        "single stream on the same GGUF.",
        "",
        "| mode | batch | requests | tok/s | x one-by-one | x llama.cpp | peak RSS MB | rows busy | prefill padding |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            "| {mode} | {bs} | {n} | {tps:.1f} | {x1:.2f} | {xl} | {mem} | {busy} | {pad} |".format(
                mode=r["mode"],
                bs=r.get("batch_size"),
                n=r.get("requests"),
                tps=r["tok_s"],
                x1=r["tok_s"] / base,
                xl=f"{r['tok_s'] / ref:.2f}" if ref else "n/a",
                mem=r.get("peak_rss_mb", "n/a"),
                busy=r.get("row_busy_share", ""),
                pad=r.get("prefill_padding_share", ""),
            )
        )
    rule = next(r for r in rows if r["mode"] == "rule")
    static_full = next((r for r in rows if r["mode"] == "hf_generate"), None)
    static = next((r for r in rows if r["mode"] == "hf_generate_mixed"), None)
    refill = next((r for r in rows if r["mode"] == "backend_mixed"), None)
    if static and refill:
        lines += [
            "",
            f"Mixed caps {'/'.join(map(str, MIXED_CAPS))} at batch {default_batch}: the loop "
            f"{refill['tok_s'] / static['tok_s']:.2f}x static `generate` batches "
            f"({refill['tok_s']:.1f} vs {static['tok_s']:.1f} tok/s).",
        ]
    lines += [
        "",
        f"The generate rule (batch {default_batch}): {rule['tok_s'] / base:.2f}x one-by-one "
        "(target >= 4)"
        + (
            f", {rule['tok_s'] / static_full['tok_s']:.2f}x static `generate` batches"
            if static_full
            else ""
        )
        + (f", {rule['tok_s'] / ref:.2f}x llama.cpp (target >= 1.2)." if ref else ".")
        + (f" llama.cpp: {llama['skipped']}" if "skipped" in llama else ""),
    ]
    return lines
