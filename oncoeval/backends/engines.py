"""How the `hf` backend decodes: the model entry's ``engine`` setting.

- ``loop``: the backend's own decode loop (``decoding.DecodeLoop``): slot KV cache, finished rows
  refilled at once, every sampled request drawn from its own seeded generator.
- ``static``: ``transformers.generate`` on static batches of ``batch_size`` requests sorted by
  prompt length (left-padded), one batch after another.
- ``continuous``: transformers' own continuous batching (the manager behind ``generate_batch``,
  paged KV cache), up to ``batch_size`` requests at a time.
- ``auto`` (the default): the engine measured fastest on the model's device (``AUTO``).

What every engine keeps:

- Greedy text: each engine decodes greedily with the same arithmetic as one-by-one
  ``generate`` (the repetition penalty included), and every token goes through the same
  end-of-answer rule (``decoding.record_token``: EOS, stop strings, the cap), so in exact
  arithmetic (fp32 on the CPU, tested) the text is the same whichever engine runs. In bf16 on
  a GPU any batching changes a few near-tie tokens; the GPU benchmark reports the share of
  outputs identical to one-by-one per engine.
- Seeded samples: only the loop draws every sampled request from its own generator, so a draw
  repeats whatever batch it lands in. The library engines draw from one generator for the
  whole batch, so sampled requests always go to the loop, whatever ``engine`` says.
- Transformers' continuous batching drops the repetition penalty (its processor does not
  support per-request state), so requests with a penalty go to ``static`` instead when
  ``continuous`` is chosen.

Since no engine changes the text a request gets, ``engine`` is operational, like
``batch_size``: it is not part of the cache key.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import logging
import time
from collections.abc import Iterator

import torch

from .decoding import DecodeLoop, DecodeParams, Job, record_token

log = logging.getLogger(__name__)

ENGINES = ("auto", "loop", "static", "continuous")

#: What ``auto`` runs greedy requests on, by device type. CPU (2 cores, SmolLM2 fp32, batch 32,
#: 64 requests, one run): the loop 139-151 tok/s, static ``generate`` 127.5, continuous batching
#: 69.6. CUDA (one H200, Llama-3-8B shape, bf16, batch 64, medians of four balanced-order rounds):
#: the loop 2024 / 1492 tok/s with equal / mixed answer lengths, static ``generate`` 2183 / 1054,
#: continuous batching 733 / 481 (docs/performance.md). Re-measure with ``python -m bench gpu``.
AUTO = {"cpu": "loop", "cuda": "loop"}


def choose(setting: str | None, device_type: str) -> str:
    """The engine for greedy requests: ``setting`` unless it is ``auto`` (or unset)."""
    setting = setting or "auto"
    if setting not in ENGINES:
        raise ValueError(f"engine {setting!r}: expected one of {', '.join(ENGINES)}")
    if setting != "auto":
        return setting
    return AUTO.get(device_type, "loop")


def engine_for(engine: str, params: DecodeParams) -> str:
    """Which engine decodes a request with ``params`` when ``engine`` is chosen for the job."""
    if params.sampled:
        return "loop"  # only the loop repeats a seeded draw in any batch
    if engine == "continuous" and params.repetition_penalty:
        return "static"  # transformers' continuous batching drops the penalty
    return engine


def assign(engine: str, jobs: list[Job]) -> dict[str, list[Job]]:
    """Jobs by the engine that decodes them, in the order the engines run.

    A shaped request (a judge's structured verdict) goes to the loop: only it masks each row's
    logits with the row's own grammar before the token is chosen.
    """
    out: dict[str, list[Job]] = {}
    for job in jobs:
        name = "loop" if job.constraint is not None else engine_for(engine, job.params)
        out.setdefault(name, []).append(job)
    order = {"continuous": 0, "static": 1, "loop": 2}
    return dict(sorted(out.items(), key=lambda item: order[item[0]]))


def replay(job: Job, tokens: list[int], eos_ids, decode=None) -> Job:
    """Feed a library engine's tokens through the loop's end-of-answer rule."""
    for token in tokens:
        if record_token(job, int(token), eos_ids, decode):
            return job
    raise RuntimeError(
        f"the engine stopped after {len(job.tokens)} tokens without EOS, a stop string or the "
        f"cap of {job.params.max_new_tokens}"
    )


class _PenaltyBlindToPadding:
    """``transformers``' repetition penalty (same arithmetic) that ignores left padding.

    ``generate``'s own processor penalises every id in the row, the padding too, so a row that
    was padded in a batch would get another answer than alone whenever the pad token matters
    (with pad = EOS: always). Padding columns are replaced by the row's first prompt token,
    which the row penalises anyway.
    """

    def __init__(self, penalty: float, pads: torch.Tensor):
        self.penalty, self.pads = penalty, pads

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        cols = torch.arange(input_ids.shape[1], device=input_ids.device)
        first = input_ids.gather(1, self.pads[:, None])
        ids = torch.where(cols[None, :] < self.pads[:, None], first, input_ids)
        picked = scores.gather(1, ids)
        picked = torch.where(picked < 0, picked * self.penalty, picked / self.penalty)
        return scores.scatter(1, ids, picked)


class StaticBatches:
    """``transformers.generate`` on length-sorted, left-padded static batches (greedy only)."""

    name = "static"

    def __init__(self, model, eos_ids: list[int], pad_id: int, batch_size: int, decode=None):
        self.model, self.eos_ids, self.pad_id = model, list(eos_ids), pad_id
        self.batch_size = max(1, int(batch_size))
        self.decode = decode
        self.device = next(model.parameters()).device
        self.batches = 0
        self.row_steps = 0  # rows x steps each batch ran (1 - busy/row_steps = idle rows)
        self.busy_steps = 0

    def stats(self) -> dict:
        return {
            "batches": self.batches,
            "row_busy_share": round(self.busy_steps / self.row_steps, 4)
            if self.row_steps
            else None,
        }

    def run(self, jobs: list[Job]) -> Iterator[Job]:
        def penalty(job):
            return job.params.repetition_penalty or 1.0

        # One penalty per generate call; within it, similar prompt lengths pad little.
        ordered = sorted(jobs, key=lambda j: (penalty(j), len(j.prompt)))
        for value, group in itertools.groupby(ordered, key=penalty):
            group = list(group)
            for start in range(0, len(group), self.batch_size):
                yield from self._batch(group[start : start + self.batch_size], value)

    def _batch(self, jobs: list[Job], penalty: float) -> Iterator[Job]:
        from transformers import LogitsProcessorList

        width = max(len(j.prompt) for j in jobs)
        pads = [width - len(j.prompt) for j in jobs]
        ids = torch.tensor([[self.pad_id] * n + j.prompt for n, j in zip(pads, jobs, strict=True)])
        mask = torch.tensor(
            [[0] * n + [1] * len(j.prompt) for n, j in zip(pads, jobs, strict=True)]
        )
        processors = LogitsProcessorList()
        if penalty != 1.0:
            pads_t = torch.tensor(pads, device=self.device)
            processors.append(_PenaltyBlindToPadding(penalty, pads_t))
        cap = max(j.params.max_new_tokens for j in jobs)
        started = time.perf_counter()
        out = self.model.generate(
            input_ids=ids.to(self.device),
            attention_mask=mask.to(self.device),
            max_new_tokens=cap,
            do_sample=False,
            num_beams=1,
            repetition_penalty=1.0,  # ours above; never the model's default on top
            eos_token_id=self.eos_ids,
            pad_token_id=self.pad_id,
            logits_processor=processors,
        )
        new = out[:, width:].tolist()
        ended = time.perf_counter()
        self.batches += 1
        self.row_steps += len(jobs) * len(new[0])
        for job, tokens in zip(jobs, new, strict=True):
            job.started, job.ended = started, ended
            replay(job, tokens, self.eos_ids, self.decode)
            self.busy_steps += len(job.tokens) + (job.finish_reason == "stop")
            yield job


class ContinuousBatches:
    """transformers' continuous batching (greedy, no repetition penalty)."""

    name = "continuous"

    def __init__(self, model, eos_ids: list[int], pad_id: int, batch_size: int, decode=None):
        self.model, self.eos_ids, self.pad_id = model, list(eos_ids), pad_id
        self.batch_size = max(1, int(batch_size))
        self.decode = decode
        self.device = next(model.parameters()).device

    def stats(self) -> dict:
        return {}

    def _manager(self, jobs: list[Job]):
        from transformers import GenerationConfig
        from transformers.generation import ContinuousBatchingConfig

        generation = GenerationConfig(
            do_sample=False,
            max_new_tokens=max(j.params.max_new_tokens for j in jobs),
            eos_token_id=self.eos_ids,
            pad_token_id=self.pad_id,
        )
        # The paged cache holds ``batch_size`` requests at their longest. Left to itself it takes
        # 80-90% of the free memory (of the machine, on a CPU), and a large batch-token budget
        # makes attention masks of hundreds of MB per forward there.
        longest = max(len(j.prompt) for j in jobs) + generation.max_new_tokens
        # transformers 5.23 calls the cache's unit `page_size`; earlier 5.x (5.17 on the lent
        # GPU machine) call it `block_size` and have no `page_size`.
        defaults = ContinuousBatchingConfig()
        page = getattr(defaults, "page_size", None) or getattr(defaults, "block_size", None) or 256
        rows = min(self.batch_size, len(jobs))
        sizes = {"num_blocks": rows * (-(-longest // page) + 1)}
        if self.device.type == "cpu":
            sizes["max_batch_tokens"] = max(longest, 512)
        kwargs = {
            "generation_config": generation,
            "continuous_batching_config": ContinuousBatchingConfig(
                max_requests_per_batch=self.batch_size, **sizes
            ),
            "block": True,
            "timeout": 5,
        }
        try:  # sizes the paged cache to the job (transformers >= 5.1x)
            from transformers.generation.continuous_batching.utils import WorkloadHints

            kwargs["workload_hints"] = WorkloadHints(
                max_prompt_length=max(len(j.prompt) for j in jobs),
                max_generated_length=generation.max_new_tokens,
                num_requests=len(jobs),
            )
        except ImportError:
            pass
        accepted = inspect.signature(self.model.continuous_batching_context_manager).parameters
        kwargs = {k: v for k, v in kwargs.items() if k in accepted}
        return self.model.continuous_batching_context_manager(**kwargs)

    def run(self, jobs: list[Job]) -> Iterator[Job]:
        if not jobs:
            return
        by_id = {f"r{i}": job for i, job in enumerate(jobs)}
        with self._manager(jobs) as manager:
            started = time.perf_counter()
            for rid, job in by_id.items():
                job.started = started
                manager.add_request(
                    job.prompt,
                    request_id=rid,
                    max_new_tokens=job.params.max_new_tokens,
                    eos_token_id=self.eos_ids,
                )
            while by_id:
                result = manager.get_result(timeout=1)
                if result is None:
                    if not manager.is_running():
                        raise RuntimeError(
                            f"transformers' continuous batching stopped with {len(by_id)} "
                            "requests unanswered"
                        )
                    continue
                if not result.is_finished() or result.request_id not in by_id:
                    continue
                job = by_id.pop(result.request_id)
                if result.error is not None:
                    raise RuntimeError(f"continuous batching: {result.error}")
                job.ended = time.perf_counter()
                yield replay(job, result.generated_tokens, self.eos_ids, self.decode)


def engine_mode(name: str):
    """The autograd mode an engine runs under. Transformers' continuous batching makes its
    tensors in the caller's thread and updates them in its own, which inference mode forbids;
    it turns gradients off itself."""
    return contextlib.nullcontext() if name == "continuous" else torch.inference_mode()


def runner(name: str, model, eos_ids: list[int], pad_id: int, batch_size: int, decode=None):
    cls = {"loop": DecodeLoop, "static": StaticBatches, "continuous": ContinuousBatches}[name]
    return cls(model, eos_ids, pad_id, batch_size, decode=decode)


class Decoder:
    """Decodes jobs as the backend does with ``engine`` chosen (see ``choose``): each job on
    the engine ``engine_for`` gives it. ``stats`` then holds the figures of each engine run."""

    def __init__(self, engine: str, model, eos_ids, pad_id: int, batch_size: int, decode=None):
        self.engine, self.model = engine, model
        self.eos_ids, self.pad_id = list(eos_ids), pad_id
        self.batch_size, self.decode = batch_size, decode
        self.stats: dict = {"engine": engine}

    def run(self, jobs: list[Job]) -> Iterator[Job]:
        """Yield every job as it finishes."""
        shares = assign(self.engine, jobs)
        for name, share in shares.items():
            run = runner(name, self.model, self.eos_ids, self.pad_id, self.batch_size, self.decode)
            with engine_mode(name):
                yield from run.run(share)
            self.stats[name] = {"requests": len(share), **run.stats()}
            if len(shares) == 1:  # one engine ran: its figures at the top level too
                self.stats.update(run.stats())
