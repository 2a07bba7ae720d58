"""`hf` backend: a transformers causal LM, loaded once per job.

- ``path``: a local folder, a hub id (offline here), or ``embedded:NAME`` (see oncoeval.embedded).
- ``gguf_file``: load GGUF weights. A GGUF load is slow (the reader parses the vocabulary twice),
  so the model is converted once to a regular fp32 checkpoint in the model store, keyed by the
  GGUF's hash and the transformers version, and later jobs load that.
- Chat template, left-padded batches sorted by prompt length, greedy unless a request samples;
  a sampled request runs with its own seeded generator so its draw does not depend on the batch
  it lands in.
- ``quantization: 4bit|8bit`` uses bitsandbytes and needs CUDA: refused otherwise, before any
  work (bitsandbytes would quietly quantize on the CPU and change the text).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from .. import embedded
from ..errors import ConfigError
from ..records import Request, Response
from .base import BaseBackend

log = logging.getLogger(__name__)

DEFAULT_MODEL_STORE = "cache/models"


def model_store() -> Path:
    return Path(os.environ.get("ONCOEVAL_MODEL_STORE", DEFAULT_MODEL_STORE))


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def resolve_weights(cfg: dict) -> tuple[str, str | None]:
    """(model folder or hub id, gguf file name or None) for a model entry."""
    path, gguf_file = cfg.get("path"), cfg.get("gguf_file")
    if embedded.is_embedded(path):
        resolved = embedded.resolve(embedded.embedded_name(path))
        if resolved.is_file():
            return str(resolved.parent), resolved.name
        return str(resolved), gguf_file
    return path, gguf_file


def ensure_converted(folder: str, gguf_file: str, store: Path | None = None) -> Path:
    """Convert a GGUF model to a regular checkpoint once; return the checkpoint folder.

    The folder name holds the GGUF's hash and the transformers version, so a new file or a new
    transformers gets a new conversion. Written to a temporary folder and renamed into place, so
    concurrent jobs never see a half-written checkpoint.
    """
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf_path = Path(folder) / gguf_file
    store = store or model_store()
    target = store / f"{gguf_path.stem}-{_sha256(gguf_path)[:16]}-tf{transformers.__version__}"
    if (target / "config.json").is_file():
        return target
    store.mkdir(parents=True, exist_ok=True)
    log.info("converting %s to a regular checkpoint at %s (once)", gguf_path, target)
    started = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=gguf_file)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=gguf_file, dtype="float32")
    if getattr(model, "hf_quantizer", None) is not None:
        # save_pretrained refuses a GGUF-loaded model until its quantization config is dropped;
        # the weights are already dequantized to fp32, so nothing is lost.
        model.hf_quantizer.remove_quantization_config(model)
    tmp = Path(tempfile.mkdtemp(dir=store, prefix=".convert-"))
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        try:
            os.rename(tmp, target)
        except OSError:
            if not (target / "config.json").is_file():  # lost a race only if the winner finished
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log.info("converted in %.1f s", time.perf_counter() - started)
    return target


class Backend(BaseBackend):
    name = "hf"
    operational_keys = BaseBackend.operational_keys | {"batch_size", "convert_gguf"}

    @classmethod
    def identity(cls, cfg: dict) -> dict:
        ident = super().identity(cfg)
        if embedded.is_embedded(cfg.get("path")):
            # The site-packages path differs between machines; the package version does not.
            name = embedded.embedded_name(cfg["path"])
            ident["path"] = f"embedded:{name}=={embedded.version(name)}"
        return ident

    @classmethod
    def config_problems(cls, cfg: dict, env=None) -> list[str]:
        if not cfg.get("path"):
            return [
                f"models[{cfg['id']}].path: an hf model needs a local folder, hub id or embedded:NAME"
            ]
        if embedded.is_embedded(cfg["path"]):
            try:
                embedded.resolve(embedded.embedded_name(cfg["path"]))
            except ConfigError as exc:
                return [f"models[{cfg['id']}].path: {exc}"]
        return []

    def __init__(self, cfg: dict, threads: int = 1, context: dict | None = None):
        super().__init__(cfg, threads, context)
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        quant = cfg.get("quantization", "none")
        if quant != "none" and not torch.cuda.is_available():
            raise ConfigError(
                f"models[{self.model_id}].quantization: {quant} needs a CUDA GPU; none is visible"
            )
        torch.set_num_threads(max(1, int(threads)))
        folder, gguf_file = resolve_weights(cfg)
        kwargs: dict = {}
        if gguf_file and cfg.get("convert_gguf", True):
            folder, gguf_file = str(ensure_converted(folder, gguf_file)), None
        if gguf_file:
            kwargs["gguf_file"] = gguf_file
        if cfg.get("revision"):
            kwargs["revision"] = cfg["revision"]
        dtype = cfg.get("dtype", "auto")
        model_kwargs = dict(kwargs, dtype=dtype if dtype != "auto" else "auto")
        if quant != "none":
            from transformers import BitsAndBytesConfig

            model_kwargs["quantization_config"] = BitsAndBytesConfig(
                load_in_4bit=quant == "4bit", load_in_8bit=quant == "8bit"
            )
            model_kwargs["device_map"] = "auto"
        started = time.perf_counter()
        self.tokenizer = AutoTokenizer.from_pretrained(folder, **kwargs)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(folder, **model_kwargs)
        if quant == "none" and torch.cuda.is_available():
            self.model.to("cuda")
        self.model.eval()
        self.device = next(self.model.parameters()).device
        self.batch_size = int(cfg.get("batch_size", 8))
        log.info(
            "loaded %s in %.1f s on %s", self.model_id, time.perf_counter() - started, self.device
        )

    def _prompt_ids(self, request: Request) -> list[int]:
        ids = self.tokenizer.apply_chat_template(
            request.messages, add_generation_prompt=True, tokenize=True
        )
        if isinstance(ids, dict) or hasattr(ids, "keys"):
            ids = ids["input_ids"]
        return list(ids)

    def _gen_kwargs(self, params: dict) -> dict:
        kwargs = {
            "max_new_tokens": int(params.get("max_new_tokens", 256)),
            "pad_token_id": self.tokenizer.pad_token_id,
        }
        if params.get("repetition_penalty"):
            kwargs["repetition_penalty"] = float(params["repetition_penalty"])
        if float(params.get("temperature", 0)) > 0:
            kwargs.update(do_sample=True, temperature=float(params["temperature"]))
            if params.get("top_p") is not None:
                kwargs["top_p"] = float(params["top_p"])
            if params.get("top_k") is not None:
                kwargs["top_k"] = int(params["top_k"])
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        return kwargs

    def _run_batch(self, batch: list[tuple[Request, list[int]]]) -> list[Response]:
        torch = self.torch
        params = batch[0][0].params
        width = max(len(ids) for _, ids in batch)
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for _, ids in batch])
        attention = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for _, ids in batch])
        if float(params.get("temperature", 0)) > 0:
            torch.manual_seed(int(params.get("seed", 0)))
        started = time.perf_counter()
        with torch.inference_mode():
            out = self.model.generate(
                input_ids=input_ids.to(self.device),
                attention_mask=attention.to(self.device),
                **self._gen_kwargs(params),
            )
        elapsed = time.perf_counter() - started
        responses = []
        eos = set(self._eos_ids())
        max_new = int(params.get("max_new_tokens", 256))
        for row, (request, ids) in zip(out[:, width:].tolist(), batch, strict=True):
            tokens = []
            for tok in row:
                if tok in eos:
                    break
                tokens.append(tok)
            finish = "length" if len(tokens) >= max_new else "stop"
            responses.append(
                Response(
                    request.request_id,
                    self.model_id,
                    self.tokenizer.decode(tokens, skip_special_tokens=True),
                    finish_reason=finish,
                    prompt_tokens=len(ids),
                    completion_tokens=len(tokens),
                    latency_s=round(elapsed / len(batch), 4),
                )
            )
        return responses

    def _eos_ids(self) -> list[int]:
        eos = self.model.generation_config.eos_token_id
        if eos is None:
            eos = self.tokenizer.eos_token_id
        return list(eos) if isinstance(eos, list | tuple) else [eos]

    def generate(self, requests: list[Request]) -> Iterator[Response]:
        encoded = [(r, self._prompt_ids(r)) for r in requests]
        greedy = [e for e in encoded if not e[0].sampled]
        sampled = [e for e in encoded if e[0].sampled]
        # Group greedy requests with identical decoding settings; sort by length to cut padding.
        groups: dict[str, list] = {}
        for item in greedy:
            groups.setdefault(repr(sorted(item[0].params.items())), []).append(item)
        for items in groups.values():
            items.sort(key=lambda e: len(e[1]))
            for start in range(0, len(items), self.batch_size):
                chunk = items[start : start + self.batch_size]
                try:
                    yield from self._run_batch(chunk)
                except Exception as exc:  # noqa: BLE001 (one bad batch must not lose the others)
                    log.exception("batch failed")
                    for r, _ in chunk:
                        yield Response(
                            r.request_id, self.model_id, None, error=f"{type(exc).__name__}: {exc}"
                        )
        for request, ids in sampled:
            # One at a time with its own seed: the draw must not depend on its batch-mates.
            try:
                yield from self._run_batch([(request, ids)])
            except Exception as exc:  # noqa: BLE001
                log.exception("sampled request failed")
                yield Response(
                    request.request_id, self.model_id, None, error=f"{type(exc).__name__}: {exc}"
                )

    def close(self) -> None:
        self.model = None
