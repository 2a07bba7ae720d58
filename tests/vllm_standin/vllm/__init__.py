"""A stand-in for vLLM's offline API (``LLM``, ``SamplingParams``) for machines without a GPU.

vLLM needs CUDA, so the tests put this package first on ``sys.path`` to exercise the `vllm`
backend's own code: what it hands the engine and what it makes of the answers. The engine
"answers" by describing its input, so a test can check every request's prompt ids and settings.

- ``STANDIN_VLLM_LOG``: a file to which every engine call appends one JSON line (engine kwargs
  at load, then the prompts and sampling settings of each ``generate`` call).
- A prompt whose text contains ``ENGINE-FAILS`` makes the whole ``generate`` call raise.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field

FAIL_MARKER = "ENGINE-FAILS"


@dataclass
class SamplingParams:
    max_tokens: int = 16
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    seed: int | None = None
    repetition_penalty: float = 1.0
    stop: list[str] = field(default_factory=list)


@dataclass
class CompletionOutput:
    text: str
    token_ids: list[int]
    finish_reason: str


@dataclass
class RequestOutput:
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput]


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


class LLM:
    def __init__(self, model: str, **kwargs):
        self.model = model
        self.kwargs = kwargs
        self.tokenizer = CharTokenizer()
        _log({"load": {"model": model, **kwargs}})

    def get_tokenizer(self) -> CharTokenizer:
        return self.tokenizer

    def generate(self, prompts, sampling_params=None, use_tqdm=True):
        if not isinstance(sampling_params, list):
            sampling_params = [sampling_params] * len(prompts)
        _log(
            {
                "generate": [
                    {"prompt_token_ids": p["prompt_token_ids"], "params": asdict(s)}
                    for p, s in zip(prompts, sampling_params, strict=True)
                ]
            }
        )
        outputs = []
        for prompt, params in zip(prompts, sampling_params, strict=True):
            ids = prompt["prompt_token_ids"]
            if FAIL_MARKER in self.tokenizer.decode(ids):
                raise RuntimeError("stand-in engine failure")
            words = [f"n={len(ids)}", f"t={params.temperature}", f"seed={params.seed}"]
            words = words[: params.max_tokens]
            outputs.append(
                RequestOutput(
                    ids,
                    [
                        CompletionOutput(
                            " ".join(words),
                            list(range(len(words))),
                            "length" if len(words) == params.max_tokens else "stop",
                        )
                    ],
                )
            )
        return outputs
