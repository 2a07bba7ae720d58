"""Response shapes (oncoeval.core.shapes) enforced in the `hf` backend's decode loop.

llguidance constrains the hf backend's own decode loop (oncoeval.backends.decoding) token by
token: each row has its own matcher, whose mask is applied to that row's logits before its
greedy choice or its own seeded draw, so the constraint composes with per-row sampling and rows
finishing at different steps. llguidance (1.9, MIT) was chosen among the PyPI candidates because
its wheel has no dependencies at all (xgrammar 0.2.8 requires triton and apache-tvm-ffi next to
torch; lm-format-enforcer walks its parser in pure Python for every token; outlines-core
compiles a schema into an index over the whole vocabulary before the first token), it computes
each step's mask lazily in Rust from one matcher per row, which is exactly the decode loop's
per-row structure, and it takes a JSON schema or a choice list directly.
"""

from __future__ import annotations

import json

from ..core.shapes import shape_of


def llguidance_grammar(shape: dict) -> str:
    import llguidance

    if "choice" in shape:
        return llguidance.grammar_from("choice", json.dumps(shape["choice"]))
    return llguidance.LLMatcher.grammar_from_json_schema(
        json.dumps(shape["json_schema"]), defaults={"whitespace_flexible": False}
    )


class TokenConstraint:
    """One row's llguidance matcher: which tokens may come next, and the tokens that came."""

    def __init__(self, tokenizer, shape: dict):
        import llguidance

        self.matcher = llguidance.LLMatcher(tokenizer, llguidance_grammar(shape), log_level=1)
        self.problem = self.matcher.get_error() if self.matcher.is_error() else ""

    def apply(self, logits_row, bitmask, index: int) -> None:
        """Mask ``logits_row`` (1-D, in place) to the tokens the shape allows next."""
        import llguidance.torch as llg_torch
        import torch

        if self.problem:
            return
        llg_torch.fill_next_token_bitmask(self.matcher, bitmask, index)
        # Unpacked here rather than with llguidance's torch.compile'd kernel, whose first call
        # compiles for seconds on a CPU.
        shifts = torch.arange(32, dtype=torch.int32)
        allowed = ((bitmask[index][:, None] >> shifts) & 1).bool().reshape(-1)
        allowed = allowed[: logits_row.shape[-1]].to(logits_row.device, non_blocking=True)
        logits_row.masked_fill_(~allowed, float("-inf"))

    def consume(self, token: int) -> None:
        if self.problem:
            return
        if not self.matcher.consume_token(token):
            self.problem = self.matcher.get_error() or f"token {token} rejected"


class ConstraintFactory:
    """Builds per-request constraints for one hf model (the tokenizer wrapping is done once)."""

    def __init__(self, hf_tokenizer, vocab_size: int, eos_ids: list[int]):
        import llguidance.hf

        self.tokenizer = llguidance.hf.from_tokenizer(
            hf_tokenizer, n_vocab=vocab_size, eos_token=list(eos_ids)
        )
        self.vocab_size = vocab_size

    def for_params(self, params: dict) -> TokenConstraint | None:
        shape = shape_of(params)
        return None if shape is None else TokenConstraint(self.tokenizer, shape)


def constrain_rows(logits, jobs) -> None:
    """Mask, in place, the logits of every row whose job carries a constraint."""
    import llguidance.torch as llg_torch

    rows = [(i, job) for i, job in enumerate(jobs) if getattr(job, "constraint", None)]
    if not rows:
        return
    bitmask = llg_torch.allocate_token_bitmask(len(jobs), logits.shape[-1])
    for i, job in rows:
        job.constraint.apply(logits[i], bitmask, i)
