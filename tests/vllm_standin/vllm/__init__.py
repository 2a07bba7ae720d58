"""A stand-in for vLLM's offline API (``LLM``, its ``llm_engine``, ``SamplingParams``).

vLLM needs CUDA, so the tests put this package first on ``sys.path`` to exercise the `vllm`
backend's own code: what it hands the engine and what it makes of the answers. The engine
"answers" by describing its input (prompt length, temperature, seed), one word per step, and
runs at most ``max_num_seqs`` requests at a time (default 3), first come first served, so
requests finish at different steps as in the real scheduler.

- ``STANDIN_VLLM_LOG``: a file to which the engine appends one JSON line per event (its load
  arguments, each added request's prompt ids and settings, each step's running request ids).
- A request whose prompt text contains ``ENGINE-FAILS`` makes the step that runs it raise;
  one containing ``ENGINE-DROPS`` is dropped by that step without an answer.
- A prompt longer than ``max_model_len`` is refused by ``add_request``, as vLLM does.
- A request with ``structured_outputs`` is answered, in one step, with a value of that shape: the
  first choice, or a small JSON instance of the schema (as guided decoding guarantees validity).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field

from .sampling_params import StructuredOutputsParams

FAIL_MARKER = "ENGINE-FAILS"
DROP_MARKER = "ENGINE-DROPS"


@dataclass
class SamplingParams:
    max_tokens: int = 16
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    seed: int | None = None
    repetition_penalty: float = 1.0
    stop: list[str] = field(default_factory=list)
    structured_outputs: StructuredOutputsParams | None = None


def _instance(schema: dict):
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {k: _instance(v) for k, v in schema.get("properties", {}).items()}
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    return "x"


def _shaped_words(shape: StructuredOutputsParams) -> list[str]:
    if shape.choice is not None:
        return [shape.choice[0]]
    schema = json.loads(shape.json) if isinstance(shape.json, str) else shape.json
    return [json.dumps(_instance(schema))]


@dataclass
class CompletionOutput:
    text: str
    token_ids: list[int]
    finish_reason: str | None


@dataclass
class RequestOutput:
    request_id: str
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput]
    finished: bool


class CharTokenizer:
    """One token per character of a plain chat rendering."""

    def apply_chat_template(self, messages, add_generation_prompt=False, tokenize=True):
        text = "".join(f"<{m['role']}>{m['content']}\n" for m in messages)
        if add_generation_prompt:
            text += "<assistant>"
        return [ord(c) for c in text] if tokenize else text

    def decode(self, ids) -> str:
        return "".join(map(chr, ids))


def _log(record: dict) -> None:
    path = os.environ.get("STANDIN_VLLM_LOG")
    if path:
        with open(path, "a") as handle:
            handle.write(json.dumps(record) + "\n")


class LLMEngine:
    def __init__(self, max_num_seqs: int, max_model_len: int | None, tokenizer: CharTokenizer):
        self.max_num_seqs, self.max_model_len, self.tokenizer = (
            max_num_seqs,
            max_model_len,
            tokenizer,
        )
        self.waiting: list[dict] = []
        self.running: list[dict] = []

    def add_request(self, request_id: str, prompt: dict, params: SamplingParams) -> None:
        ids = prompt["prompt_token_ids"]
        if self.max_model_len is not None and len(ids) > self.max_model_len:
            raise ValueError(f"prompt of {len(ids)} tokens is longer than max_model_len")
        _log({"add": request_id, "prompt_token_ids": ids, "params": asdict(params)})
        words = [f"n={len(ids)}", f"t={params.temperature}", f"seed={params.seed}"]
        if params.structured_outputs is not None:
            words = _shaped_words(params.structured_outputs)
        self.waiting.append(
            {
                "id": request_id,
                "ids": ids,
                "words": words[: params.max_tokens],
                "done": 0,
                "length": len(words) >= params.max_tokens,
            }
        )

    def has_unfinished_requests(self) -> bool:
        return bool(self.waiting or self.running)

    def abort_request(self, request_ids) -> None:
        drop = set(request_ids)
        self.waiting = [r for r in self.waiting if r["id"] not in drop]
        self.running = [r for r in self.running if r["id"] not in drop]

    def step(self) -> list[RequestOutput]:
        while self.waiting and len(self.running) < self.max_num_seqs:
            self.running.append(self.waiting.pop(0))
        _log({"step": [r["id"] for r in self.running]})
        outputs = []
        dropped = [r for r in self.running if DROP_MARKER in self.tokenizer.decode(r["ids"])]
        self.running = [r for r in self.running if r not in dropped]
        for r in self.running:
            if FAIL_MARKER in self.tokenizer.decode(r["ids"]):
                raise RuntimeError("stand-in engine failure")
            r["done"] += 1
            finished = r["done"] >= len(r["words"])
            words = r["words"][: r["done"]]
            reason = ("length" if r["length"] else "stop") if finished else None
            outputs.append(
                RequestOutput(
                    r["id"],
                    r["ids"],
                    [CompletionOutput(" ".join(words), list(range(len(words))), reason)],
                    finished,
                )
            )
        self.running = [r for r in self.running if r["done"] < len(r["words"])]
        return outputs


class LLM:
    def __init__(self, model: str, **kwargs):
        self.model = model
        self.kwargs = kwargs
        self.tokenizer = CharTokenizer()
        self.llm_engine = LLMEngine(
            kwargs.get("max_num_seqs", 3), kwargs.get("max_model_len"), self.tokenizer
        )
        _log({"load": {"model": model, **kwargs}})

    def get_tokenizer(self) -> CharTokenizer:
        return self.tokenizer
