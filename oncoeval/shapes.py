"""Response shapes: a request may carry the shape of its answer, and each backend enforces it.

A records-level module (beside oncoeval.records): studies build shaped requests with it and
backends enforce the shapes, so neither imports from the judges.

The shape travels in the request's params as ``response_shape`` (so it is part of the cache
key), one of:

- ``{"json_schema": {...}, "name": "verdict"}``: the reply is one JSON value valid under the
  schema;
- ``{"choice": ["yes", "no"]}``: the reply is exactly one of the strings.

How each backend enforces it:

- ``openai``: ``response_format`` ``{"type": "json_schema", ...}`` (Structured Outputs); a choice
  goes as ``structured_outputs: {"choice": [...]}`` in the body, which vLLM's OpenAI-compatible
  server reads (OpenAI itself has no choice form and refuses it). A
  server that refuses either is asked again with the prompt alone, and the response records why
  in ``structured_fallback``.
- ``vllm``: its guided decoding, ``SamplingParams(structured_outputs=StructuredOutputsParams(
  json=... | choice=...))`` (the form since vLLM 0.12, which removed ``guided_decoding``).
- ``hf``: llguidance constrains the own decode loop token by token: each row has its own matcher,
  whose mask is applied to that row's logits before its greedy choice or its own seeded draw, so
  the constraint composes with per-row sampling and rows finishing at different steps.
  llguidance (1.9, MIT) was chosen among the PyPI candidates because its wheel has no
  dependencies at all (xgrammar 0.2.8 requires triton and apache-tvm-ffi next to torch;
  lm-format-enforcer walks its parser in pure Python for every token; outlines-core compiles a
  schema into an index over the whole vocabulary before the first token), it computes each
  step's mask lazily in Rust from one matcher per row, which is exactly the decode loop's
  per-row structure, and it takes a JSON schema or a choice list directly.
"""

from __future__ import annotations

import json

SHAPE_PARAM = "response_shape"


def json_schema_shape(schema: dict, name: str = "verdict") -> dict:
    return {"json_schema": schema, "name": name}


def choice_shape(options) -> dict:
    return {"choice": [str(o) for o in options]}


def shape_problem(shape) -> str:
    """Why ``shape`` is not a valid response shape ('' when it is)."""
    if not isinstance(shape, dict):
        return f"{SHAPE_PARAM} must be an object"
    kinds = [k for k in ("json_schema", "choice") if k in shape]
    if len(kinds) != 1:
        return f'{SHAPE_PARAM} needs exactly one of "json_schema" or "choice"'
    extra = set(shape) - {"json_schema", "choice", "name"}
    if extra:
        return f"{SHAPE_PARAM}: unknown keys {sorted(extra)}"
    if "choice" in shape:
        options = shape["choice"]
        if not isinstance(options, list) or not options:
            return f"{SHAPE_PARAM}.choice must be a non-empty list of strings"
        if not all(isinstance(o, str) and o for o in options):
            return f"{SHAPE_PARAM}.choice must be a non-empty list of strings"
        return ""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    schema = shape["json_schema"]
    if not isinstance(schema, dict):
        return f"{SHAPE_PARAM}.json_schema must be a JSON schema object"
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return f"{SHAPE_PARAM}.json_schema is not a valid JSON schema: {exc.message}"
    name = shape.get("name", "verdict")
    if not isinstance(name, str) or not name.replace("_", "").replace("-", "").isalnum():
        return f"{SHAPE_PARAM}.name must be letters, digits, _ or -"
    return ""


def shape_of(params: dict) -> dict | None:
    return (params or {}).get(SHAPE_PARAM)


def text_problem(shape: dict, text: str | None) -> str:
    """Why ``text`` does not have the shape ('' when it does)."""
    if text is None:
        return "no text"
    if "choice" in shape:
        return "" if text in shape["choice"] else f"not one of {shape['choice']}"
    from jsonschema import Draft202012Validator

    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"not JSON: {exc.msg}"
    except (ValueError, RecursionError) as exc:  # an integer past 4,300 digits, deep nesting
        return f"not JSON: {type(exc).__name__}: {str(exc)[:100]}"
    errors = sorted(Draft202012Validator(shape["json_schema"]).iter_errors(value), key=str)
    return f"not valid under the schema: {errors[0].message}" if errors else ""


# --- openai ------------------------------------------------------------------------------------


def openai_fields(shape: dict) -> tuple[dict, dict]:
    """(keyword arguments, extra body fields) of ``chat.completions.create`` for a shape."""
    if "choice" in shape:
        return {}, {"structured_outputs": {"choice": list(shape["choice"])}}
    return {
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": shape.get("name", "verdict"),
                "schema": shape["json_schema"],
                "strict": True,
            },
        }
    }, {}


# --- vllm --------------------------------------------------------------------------------------


def vllm_structured_kwargs(shape: dict) -> dict:
    """Keyword arguments of vLLM's ``StructuredOutputsParams`` for a shape."""
    if "choice" in shape:
        return {"choice": list(shape["choice"])}
    return {"json": shape["json_schema"]}


# --- hf: llguidance in the own decode loop -----------------------------------------------------


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
