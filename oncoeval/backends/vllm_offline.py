"""`vllm` backend: vLLM's offline engine (``vllm.LLM``) inside the `generate` job.

An optional extra for GPU machines (``pip install 'oncoeval[vllm]'``): vLLM pins its own torch
and transformers, so it lives in its own environment (envs/ or the cluster's module), never in
the default install. The module imports vllm only when a job builds the backend, so the DAG
builds anywhere.

- ``path``: local folder or hub id; ``dtype``; ``quantization`` (a vLLM method such as ``awq``,
  ``fp8``, ``bitsandbytes``, or ``none``); ``gpu_memory_utilization``; ``max_model_len``;
  ``tensor_parallel_size``.
- Prompts go in as token ids from the model's chat template, so ``prompt_tokens`` is exact.
- Every request carries its own ``SamplingParams``: greedy unless it samples, and a sampled
  request passes its ``seed`` to vLLM's per-request generator, so its draw does not depend on the
  batch it lands in; a request with a ``response_shape`` gets vLLM's structured outputs
  (:func:`shape_kwargs`).
- All of a job's requests are queued in the engine at once and the engine is stepped until they
  are done, which is what ``LLM.generate`` does inside; but every answer is handed back (and
  cached by the job) the step it finishes, so a killed job loses only the requests in flight,
  and the engine's batch never drains at a chunk boundary. ``latency_s`` counts from the moment
  a request is queued, so it includes its wait for a place in the engine's batch.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import time
from collections.abc import Iterator
from pathlib import Path

from ..core.errors import ConfigError
from ..core.io import encodable_messages
from ..core.records import REQUEST_MAX_NEW_TOKENS_UNSET, REQUEST_SEED_UNSET, Request, Response
from ..core.shapes import shape_of
from . import failures
from .base import BaseBackend, LocalModelBackend, chat_template_hash, local_model_schema

log = logging.getLogger(__name__)

# vLLM's engine-wide seed (each sampled request also passes its own, so its draw does not depend
# on the batch); fixed so that a rerun draws alike.
ENGINE_SEED = 0


def missing_vllm_message(model_id: str) -> str | None:
    """The refusal when vllm is not importable here, else None."""
    if importlib.util.find_spec("vllm") is not None:
        return None
    return (
        f"models[{model_id}].backend: vllm needs the optional extra 'vllm' (pip install "
        "'oncoeval[vllm]', on a CUDA machine, in its own environment: vLLM pins its own torch "
        "and transformers); it is not installed here. Use backend: hf, or run this model's "
        "generate jobs where vLLM is installed."
    )


def sampling_kwargs(params: dict) -> dict:
    """vLLM ``SamplingParams`` keyword arguments for one request's effective params."""
    temperature = float(params.get("temperature", 0) or 0)
    kwargs: dict = {
        "max_tokens": int(params.get("max_new_tokens", REQUEST_MAX_NEW_TOKENS_UNSET)),
        "temperature": temperature,
    }
    if temperature > 0:
        kwargs["seed"] = int(params.get("seed") or REQUEST_SEED_UNSET)
        if params.get("top_p") is not None:
            kwargs["top_p"] = float(params["top_p"])
        if params.get("top_k") is not None:
            kwargs["top_k"] = int(params["top_k"])
    if params.get("repetition_penalty"):
        kwargs["repetition_penalty"] = float(params["repetition_penalty"])
    stop = params.get("stop")
    if stop:
        kwargs["stop"] = [stop] if isinstance(stop, str) else list(stop)
    return kwargs


def shape_kwargs(shape: dict) -> dict:
    """Keyword arguments of vLLM's ``StructuredOutputsParams`` for a response shape
    (oncoeval.core.shapes): ``json=`` a schema or ``choice=`` the strings (the form since vLLM 0.12,
    which removed ``guided_decoding``)."""
    if "choice" in shape:
        return {"choice": list(shape["choice"])}
    return {"json": shape["json_schema"]}


def structured_kwargs(params: dict) -> dict:
    """``structured_outputs`` of a shaped request: vLLM's guided decoding enforces the shape."""
    shape = shape_of(params)
    if shape is None:
        return {}
    from vllm.sampling_params import StructuredOutputsParams

    return {"structured_outputs": StructuredOutputsParams(**shape_kwargs(shape))}


CONFIG_SCHEMA = local_model_schema(
    {
        "quantization": {
            "description": "vLLM quantization method (awq, fp8, bitsandbytes...) or none.",
            "type": "string",
            "default": "none",
        },
        "gpu_memory_utilization": {
            "description": "Share of GPU memory vLLM may take.",
            "type": "number",
            "default": 0.9,
        },
        "max_model_len": {
            "description": "Context length; null keeps the model's.",
            "type": ["integer", "null"],
            "default": None,
        },
        "tensor_parallel_size": {
            "description": (
                "GPUs one vLLM engine spreads the model over (ask for as many in resources.gpu)."
            ),
            "type": "integer",
            "minimum": 1,
            "default": 1,
        },
    }
)


class Backend(LocalModelBackend):
    name = "vllm"
    libraries = ("vllm", "torch", "transformers")
    CONFIG_SCHEMA = CONFIG_SCHEMA
    decoding_keys = (*BaseBackend.decoding_keys, "dtype", "quantization")
    # Scheduling and memory settings change how fast, not what is answered.
    operational_keys = BaseBackend.operational_keys | {
        "gpu_memory_utilization",
        "max_model_len",
        "tensor_parallel_size",
    }

    @classmethod
    def provenance(cls, cfg: dict, root) -> dict:
        # A hub id names its weights by ``revision`` (in the record); a local folder by its files.
        folder = Path(cfg["path"])
        template = chat_template_hash(folder) if folder.is_dir() else None
        return {**super().provenance(cfg, root), "chat_template_sha256": template}

    @classmethod
    def config_problems(cls, cfg: dict, env=None) -> list[str]:
        # vllm itself is checked when the job starts, not here: the DAG is often built on a
        # login node without the GPU stack, and the job runs where vLLM is installed.
        if not cfg.get("path"):
            return [f"models[{cfg['id']}].path: a vllm model needs a local folder or hub id"]
        return []

    def __init__(self, cfg: dict, threads: int = 1, context: dict | None = None):
        cfg = self.filled(cfg)
        super().__init__(cfg, threads, context)
        problem = missing_vllm_message(self.model_id)
        if problem:
            raise ConfigError(problem)
        from vllm import LLM

        started = time.perf_counter()
        quant = cfg.get("quantization") or "none"
        engine_kwargs = {
            "model": cfg["path"],
            "dtype": cfg.get("dtype") or "auto",
            "quantization": None if quant == "none" else quant,
            "gpu_memory_utilization": float(cfg["gpu_memory_utilization"]),
            "tensor_parallel_size": int(cfg["tensor_parallel_size"]),
            "seed": ENGINE_SEED,
        }
        if cfg.get("max_model_len"):
            engine_kwargs["max_model_len"] = int(cfg["max_model_len"])
        if cfg.get("revision"):
            engine_kwargs["revision"] = cfg["revision"]
        self.llm = LLM(**engine_kwargs)
        self.tokenizer = self.llm.get_tokenizer()
        log.info("loaded %s in vLLM in %.1f s", self.model_id, time.perf_counter() - started)

    def _prompt_ids(self, request: Request) -> list[int]:
        ids = self.tokenizer.apply_chat_template(
            encodable_messages(request.messages), add_generation_prompt=True, tokenize=True
        )
        if hasattr(ids, "keys"):
            ids = ids["input_ids"]
        return list(ids)

    def generate(self, requests: list[Request]) -> Iterator[Response]:
        from vllm import SamplingParams

        engine = self.llm.llm_engine
        queued: dict[str, tuple[Request, int, float]] = {}
        for request in requests:
            try:
                ids = self._prompt_ids(request)
                params = SamplingParams(
                    **sampling_kwargs(request.params), **structured_kwargs(request.params)
                )
                # The engine refuses a prompt longer than max_model_len here, request by request.
                engine.add_request(request.request_id, {"prompt_token_ids": ids}, params)
            except Exception as exc:  # noqa: BLE001 (a bad request must not stop the others)
                yield self._error(request, exc)
                continue
            queued[request.request_id] = (request, len(ids), time.perf_counter())
        try:
            while queued:
                if not engine.has_unfinished_requests():
                    # Nothing left to step, yet answers are missing: never wait forever.
                    raise RuntimeError("the engine dropped these requests without an answer")
                for output in engine.step():
                    if not output.finished or output.request_id not in queued:
                        continue
                    request, n_prompt, started = queued.pop(output.request_id)
                    completion = output.outputs[0]
                    yield Response(
                        request.request_id,
                        self.model_id,
                        completion.text,
                        finish_reason=completion.finish_reason,
                        prompt_tokens=n_prompt,
                        completion_tokens=len(completion.token_ids),
                        latency_s=round(time.perf_counter() - started, 4),
                    )
        except Exception as exc:  # noqa: BLE001 (the unanswered requests fail, not the job)
            log.exception("vLLM failed with %d requests unanswered", len(queued))
            with contextlib.suppress(Exception):
                engine.abort_request(list(queued))
            for request, _, _ in queued.values():
                yield self._error(request, exc)

    def _error(self, request: Request, exc: Exception) -> Response:
        # The model's own exception (out of memory, a CUDA error): no kind of its own.
        return Response(
            request.request_id,
            self.model_id,
            None,
            error=f"{type(exc).__name__}: {exc}",
            error_kind=failures.OTHER,
        )

    def close(self) -> None:
        self.llm = None
