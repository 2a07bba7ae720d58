"""A batched decode loop for transformers causal LMs (used by the `hf` backend).

``transformers.generate`` runs a batch until its last row finishes, grows its KV cache by
concatenation on every step (a full copy of the cache per token), and draws sampled tokens from
one generator for the whole batch. This loop instead:

- keeps the KV cache in preallocated slot buffers (a new token is written in place);
- refills a row as soon as it finishes with the next waiting request (continuous batching), so the
  batch stays full; requests are admitted in prompt-length order to keep prefill padding small;
- gives every sampled request its own ``torch.Generator`` seeded from the request, and does the
  sampling arithmetic row by row, so a seeded draw does not depend on its batch-mates;
- applies the decoding settings per row (greedy and sampled requests share a batch).

Every row attends only to its own slots through an explicit mask and carries its own position
ids, so rows that entered the batch at different times never see each other.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import torch
from transformers.cache_utils import Cache, DynamicCache, DynamicLayer

from ..core.records import REQUEST_MAX_NEW_TOKENS_UNSET, REQUEST_SEED_UNSET

log = logging.getLogger(__name__)


@dataclass
class DecodeParams:
    """Per-request decoding settings (HF semantics: penalty, then temperature, top-k, top-p)."""

    max_new_tokens: int = REQUEST_MAX_NEW_TOKENS_UNSET
    temperature: float = 0.0
    top_p: float | None = None
    top_k: int | None = None
    repetition_penalty: float | None = None
    seed: int = REQUEST_SEED_UNSET
    stop: tuple[str, ...] = ()

    @property
    def sampled(self) -> bool:
        return self.temperature > 0

    @classmethod
    def from_params(cls, params: dict) -> DecodeParams:
        stop = params.get("stop") or ()
        if isinstance(stop, str):
            stop = (stop,)
        return cls(
            max_new_tokens=int(params.get("max_new_tokens", REQUEST_MAX_NEW_TOKENS_UNSET)),
            temperature=float(params.get("temperature", 0) or 0),
            top_p=None if params.get("top_p") is None else float(params["top_p"]),
            top_k=None if params.get("top_k") is None else int(params["top_k"]),
            repetition_penalty=(
                float(params["repetition_penalty"]) if params.get("repetition_penalty") else None
            ),
            seed=int(params.get("seed") or REQUEST_SEED_UNSET),
            stop=tuple(stop),
        )


@dataclass(eq=False)
class Job:
    """One request in the decode loop."""

    key: object
    prompt: list[int]
    params: DecodeParams
    tokens: list[int] = field(default_factory=list)
    finish_reason: str | None = None
    text: str | None = None
    started: float = 0.0
    ended: float = 0.0
    constraint: object = None  # .constraints.TokenConstraint, for shaped requests


class _SlotLayer(DynamicLayer):
    """One layer's KV cache in a preallocated buffer; the loop owns the write position."""

    def __init__(self, owner: SlotCache, index: int):
        super().__init__()
        self.owner, self.index = owner, index
        self.is_initialized = True

    def lazy_initialization(self, key_states, value_states) -> None:  # buffers exist already
        return None

    def update(self, key_states, value_states, *args, **kwargs):
        owner = self.owner
        start, end = owner.length, owner.length + key_states.shape[-2]
        keys, values = owner.keys[self.index], owner.values[self.index]
        keys[:, :, start:end] = key_states
        values[:, :, start:end] = value_states
        self.keys, self.values = keys[:, :, :end], values[:, :, :end]
        return self.keys, self.values

    def get_seq_length(self) -> int:
        return self.owner.length

    def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
        return self.owner.length + query_length, 0


class SlotCache(Cache):
    """KV buffers ``[rows, kv_heads, slots, head_dim]`` per layer plus a slot validity mask.

    Slots ``[0, length)`` hold keys; ``valid[r, s]`` says whether row ``r`` may attend slot ``s``.
    A row's prompt is right-aligned to ``length`` when it is admitted, so all rows write their next
    token to the same slot and one forward call serves the whole batch.
    """

    def __init__(self, n_layers: int, rows: int, kv_heads: int, head_dim: int, dtype, device):
        self.n_layers, self.kv_heads, self.head_dim = n_layers, kv_heads, head_dim
        self.dtype, self.device = dtype, device
        self.length = 0
        self.capacity = 0
        self.keys: list[torch.Tensor] = []
        self.values: list[torch.Tensor] = []
        self.valid = torch.zeros(rows, 0, dtype=torch.bool, device=device)
        super().__init__(layers=[_SlotLayer(self, i) for i in range(n_layers)])
        self._resize(rows, 0, 256)

    @property
    def rows(self) -> int:
        return self.valid.shape[0]

    def _resize(self, rows: int, shift: int, capacity: int, keep_rows=None) -> None:
        """New buffers of ``capacity`` slots; old slots move right by ``shift`` (left if < 0)."""
        keep_rows = torch.arange(self.rows, device=self.device) if keep_rows is None else keep_rows
        n_keep = len(keep_rows)
        src_lo = max(0, -shift)
        dst_lo = max(0, shift)
        n_slots = self.length - src_lo
        shape = (rows, self.kv_heads, capacity, self.head_dim)
        for i in range(self.n_layers):
            for store in (self.keys, self.values):
                new = torch.zeros(shape, dtype=self.dtype, device=self.device)
                if store and n_slots > 0:
                    new[:n_keep, :, dst_lo : dst_lo + n_slots] = store[i][
                        keep_rows, :, src_lo : self.length
                    ]
                if len(store) > i:
                    store[i] = new
                else:
                    store.append(new)
        valid = torch.zeros(rows, capacity, dtype=torch.bool, device=self.device)
        if n_slots > 0:
            valid[:n_keep, dst_lo : dst_lo + n_slots] = self.valid[keep_rows, src_lo : self.length]
        self.valid = valid
        self.capacity = capacity
        self.length = dst_lo + n_slots

    def reserve(self, prompt_len: int, new_tokens: int) -> None:
        """Make room for a prompt of ``prompt_len`` ending at ``length`` and ``new_tokens`` more."""
        dead = self.dead_prefix()
        shift = max(0, prompt_len - self.length)
        if shift == 0 and dead > max(64, self.length // 2):
            shift = -min(dead, self.length - prompt_len)  # drop slots no row attends any more
        needed = self.length + shift + new_tokens
        if shift != 0 or needed > self.capacity:
            self._resize(self.rows, shift, max(needed + 64, self.capacity))

    def dead_prefix(self) -> int:
        """Leading slots that no row attends."""
        if self.length == 0:
            return 0
        used = self.valid[:, : self.length].any(dim=0)
        return int(used.float().argmax()) if bool(used.any()) else self.length

    def keep(self, rows: torch.Tensor, capacity_left: int) -> None:
        """Keep only ``rows`` (a compaction when the batch shrinks at the end of a run)."""
        dead = self.dead_prefix()
        self._resize(len(rows), -dead, self.length - dead + capacity_left, keep_rows=rows)

    def write(self, rows: torch.Tensor, layer_kv, width: int, prompt_mask: torch.Tensor) -> None:
        """Copy a prefill's KV (``width`` slots) into ``rows``, right-aligned to ``length``."""
        lo = self.length - width
        for i, (k, v) in enumerate(layer_kv):
            self.keys[i][rows, :, lo : self.length] = k
            self.values[i][rows, :, lo : self.length] = v
        self.valid[rows] = False
        self.valid[rows, lo : self.length] = prompt_mask.bool()


def _apply_penalty(logits: torch.Tensor, seen: torch.Tensor, penalty: float) -> torch.Tensor:
    # Same arithmetic as transformers' RepetitionPenaltyLogitsProcessor.
    penalised = torch.where(logits < 0, logits * penalty, logits / penalty)
    return torch.where(seen, penalised, logits)


def _sample(logits: torch.Tensor, p: DecodeParams, generator: torch.Generator) -> int:
    """Draw one token from a 1-D row of logits (HF order: temperature, top-k, top-p)."""
    scores = logits / p.temperature
    if p.top_k is not None and 0 < p.top_k < scores.shape[-1]:
        kth = torch.topk(scores, p.top_k).values[-1]
        scores = scores.masked_fill(scores < kth, float("-inf"))
    if p.top_p is not None and p.top_p < 1.0:
        sorted_scores, order = torch.sort(scores, descending=False)
        cumulative = sorted_scores.softmax(dim=-1).cumsum(dim=-1)
        remove_sorted = cumulative <= (1 - p.top_p)
        remove_sorted[-1:] = False
        remove = remove_sorted.scatter(0, order, remove_sorted)
        scores = scores.masked_fill(remove, float("-inf"))
    probs = scores.softmax(dim=-1)
    return int(torch.multinomial(probs, 1, generator=generator))


class DecodeLoop:
    """Continuous-batching decode for one loaded model.

    ``run(jobs)`` keeps at most ``batch_size`` rows in flight. Greedy choices are made on the
    model's device for all rows at once; sampled rows copy their (penalised) logits to the CPU
    and draw from their own generator, so a draw is the same on any batch composition.
    """

    def __init__(self, model, eos_ids: list[int], pad_id: int, batch_size: int, decode=None):
        self.model = model
        self.eos_ids = set(eos_ids)
        self.pad_id = pad_id
        self.batch_size = max(1, int(batch_size))
        self.decode = decode  # token ids -> text, only needed for stop strings
        cfg = model.config.get_text_config(decoder=True)
        self.n_layers = cfg.num_hidden_layers
        self.kv_heads = getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads
        self.head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        self.vocab = model.get_output_embeddings().weight.shape[0]
        self.device = next(model.parameters()).device
        self.dtype = next(model.parameters()).dtype
        self.steps = 0  # decode forward calls
        self.row_steps = 0  # rows x decode steps, idle rows included (1 - busy/row_steps = waste)
        self.busy_steps = 0  # rows x decode steps that produced a token
        self.prefill_tokens = 0  # prompt tokens prefilled
        self.prefill_slots = 0  # prompt tokens + left padding (1 - tokens/slots = padding waste)
        self.prefill_s = 0.0
        self.decode_s = 0.0

    def stats(self) -> dict:
        """Where the time went: prefill vs decode, idle rows, padding."""
        return {
            "decode_steps": self.steps,
            "row_busy_share": round(self.busy_steps / self.row_steps, 4)
            if self.row_steps
            else None,
            "prefill_padding_share": (
                round(1 - self.prefill_tokens / self.prefill_slots, 4)
                if self.prefill_slots
                else None
            ),
            "prefill_s": round(self.prefill_s, 3),
            "decode_s": round(self.decode_s, 3),
        }

    def _prefill(self, jobs: list[Job]):
        """One forward over new prompts (left-padded); their KV and last-position logits."""
        width = max(len(j.prompt) for j in jobs)
        ids = torch.full((len(jobs), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(jobs), width), dtype=torch.long)
        for r, job in enumerate(jobs):
            ids[r, width - len(job.prompt) :] = torch.tensor(job.prompt)
            mask[r, width - len(job.prompt) :] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        cache = DynamicCache(config=self.model.config)
        out = self.model(
            input_ids=ids.to(self.device),
            attention_mask=mask.to(self.device),
            position_ids=positions.to(self.device),
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=1,
        )
        kv = [(layer.keys, layer.values) for layer in cache.layers]
        self.prefill_tokens += sum(len(j.prompt) for j in jobs)
        self.prefill_slots += width * len(jobs)
        return out.logits[:, -1, :].float(), kv, width, mask.to(self.device)

    def run(self, jobs: list[Job]) -> Iterator[Job]:
        """Decode every job; yield each as it finishes (``tokens``, ``finish_reason`` set)."""
        # Longest prompts first (popped from the end): rows admitted together have similar
        # lengths, so prefill pads little.
        waiting = sorted(jobs, key=lambda j: len(j.prompt))
        n_rows = min(self.batch_size, len(waiting))
        if n_rows == 0:
            return
        dev = self.device
        cache = SlotCache(self.n_layers, n_rows, self.kv_heads, self.head_dim, self.dtype, dev)
        state = _Rows(n_rows, self.vocab, self.pad_id, dev)

        while True:
            free = [r for r, j in enumerate(state.jobs) if j is None]
            if free and waiting:
                take = [waiting.pop() for _ in range(min(len(free), len(waiting)))]
                started = time.perf_counter()
                logits, kv, width, mask = self._prefill(take)
                self.prefill_s += time.perf_counter() - started
                cache.reserve(width, max(j.params.max_new_tokens for j in take) + 1)
                rows = free[: len(take)]
                cache.write(torch.tensor(rows, device=dev), kv, width, mask)
                for row, job in zip(rows, take, strict=True):
                    job.started = started
                    state.admit(row, job)
                yield from self._advance(state, cache, rows, logits)
                continue
            live = [r for r, j in enumerate(state.jobs) if j is not None]
            if not live:
                break
            if not waiting and len(live) <= cache.rows * 3 // 4:
                # The tail of a run: drop finished rows instead of computing them.
                left = max(
                    state.jobs[r].params.max_new_tokens - len(state.jobs[r].tokens) for r in live
                )
                cache.keep(torch.tensor(live, device=dev), left + 1)
                state.keep(live)
                continue
            slot = cache.length
            if slot >= cache.capacity:
                cache.reserve(0, 64)
            # Idle rows attend their own (ignored) slot so that no row's softmax is empty.
            cache.valid[:, slot].fill_(True)
            step_started = time.perf_counter()
            out = self.model(
                input_ids=state.next_ids[:, None],
                attention_mask=cache.valid[:, None, None, : slot + 1],
                position_ids=state.positions[:, None],
                past_key_values=cache,
                use_cache=True,
            )
            cache.length = slot + 1
            state.positions += 1
            self.steps += 1
            self.row_steps += cache.rows
            self.busy_steps += len(live)
            # Idle rows get a token too (it is never read): slicing every row needs no index
            # tensor, and choosing for all rows at once keeps the step free of host round trips.
            logits = out.logits[:, -1, :].float()
            self.decode_s += time.perf_counter() - step_started
            yield from self._advance(state, cache, None, logits)

    def _advance(
        self, state: _Rows, cache: SlotCache, rows: list[int] | None, logits: torch.Tensor
    ) -> Iterator[Job]:
        """Choose the next token of ``rows`` (None: every row) from their logits.

        Finished jobs are yielded and their rows freed. On a GPU every host read waits for the
        device to drain, so a decode step reads back exactly one thing, the chosen tokens; all
        other per-row state stays on the device or is known on the host already.
        """
        index = None if rows is None else torch.tensor(rows, device=self.device)
        row_ids = range(cache.rows) if rows is None else rows
        jobs = [state.jobs[row] for row in row_ids]
        if any(job is not None and job.params.repetition_penalty for job in jobs):
            seen = state.seen if index is None else state.seen[index]
            penalty = state.penalty if index is None else state.penalty[index]
            logits = _apply_penalty(logits, seen, penalty[:, None])
        if any(job is not None and job.constraint is not None for job in jobs):
            from .constraints import constrain_rows

            constrain_rows(logits, jobs)
        chosen = logits.argmax(dim=-1)
        tokens = chosen.tolist()
        sampled = False
        for i, (row, job) in enumerate(zip(row_ids, jobs, strict=True)):
            if job is None:  # an idle row
                continue
            if job.params.sampled:
                tokens[i] = _sample(logits[i].cpu(), job.params, state.generators[row])
                sampled = True
            if self._record(job, tokens[i]):
                job.ended = time.perf_counter()
                state.free(row)
                cache.valid[row] = False
                yield job
        if sampled:
            chosen = torch.tensor(tokens, device=self.device)
        # Finished and idle rows are written too: admitting a request resets its row.
        if index is None:
            state.seen.scatter_(1, chosen[:, None], True)
            state.next_ids.copy_(chosen)
        else:
            state.seen[index, chosen] = True
            state.next_ids[index] = chosen

    def _record(self, job: Job, token: int) -> bool:
        return record_token(job, token, self.eos_ids, self.decode)


def record_token(job: Job, token: int, eos_ids, decode=None) -> bool:
    """Append ``token`` to the job; True when the job is finished (EOS, a stop string, its cap).

    The one rule for every engine: the library engines replay their tokens through it, so a
    job ends at the same token and with the same text whichever engine decoded it.
    """
    p = job.params
    if token in eos_ids:
        job.finish_reason = "stop"
        return True
    job.tokens.append(token)
    if job.constraint is not None:  # the grammar follows every token the row emits
        job.constraint.consume(token)
    if p.stop and decode is not None:
        text = decode(job.tokens)
        cuts = [text.find(s) for s in p.stop if s in text]
        if cuts:
            job.text = text[: min(cuts)]
            job.finish_reason = "stop"
            return True
    if len(job.tokens) >= p.max_new_tokens:
        job.finish_reason = "length"
        return True
    return False


class _Rows:
    """Per-row decoding state of the batch (tensors on the model's device)."""

    def __init__(self, n: int, vocab: int, pad_id: int, device):
        self.device = device
        self.jobs: list[Job | None] = [None] * n
        self.generators: list[torch.Generator | None] = [None] * n
        self.positions = torch.zeros(n, dtype=torch.long, device=device)
        self.next_ids = torch.full((n,), pad_id, dtype=torch.long, device=device)
        self.seen = torch.zeros(n, vocab, dtype=torch.bool, device=device)
        self.penalty = torch.ones(n, dtype=torch.float32, device=device)

    def admit(self, row: int, job: Job) -> None:
        self.jobs[row] = job
        self.positions[row] = len(job.prompt)
        self.seen[row] = False
        self.seen[row, torch.tensor(job.prompt, device=self.device)] = True
        self.penalty[row] = job.params.repetition_penalty or 1.0
        self.generators[row] = (
            torch.Generator().manual_seed(job.params.seed) if job.params.sampled else None
        )

    def free(self, row: int) -> None:
        self.jobs[row] = None
        self.generators[row] = None

    def keep(self, rows: list[int]) -> None:
        index = torch.tensor(rows, device=self.device)
        self.jobs = [self.jobs[r] for r in rows]
        self.generators = [self.generators[r] for r in rows]
        self.positions = self.positions[index]
        self.next_ids = self.next_ids[index]
        self.seen = self.seen[index]
        self.penalty = self.penalty[index]
