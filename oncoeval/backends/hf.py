"""`hf` backend: a transformers causal LM, loaded once per job.

- ``path``: a local folder, a hub id (offline here), or ``embedded:NAME`` (see oncoeval.models.embedded).
- ``gguf_file``: load GGUF weights. A GGUF load is slow (the reader parses the vocabulary twice),
  so the model is converted once to a regular fp32 checkpoint in the model store, keyed by the
  GGUF's hash and the transformers version (the workflow's `convert_model` rule does it before
  the model's `generate` jobs; ``ensure_converted`` also does it on first use outside it).
- Chat template; requests decoded by the ``engine`` (see oncoeval.backends.engines): the
  backend's own loop (``decoding.DecodeLoop``: continuous batching of ``batch_size`` rows
  admitted in prompt-length order, left-padded prefill), ``transformers.generate`` static
  batches, or transformers' continuous batching; ``auto`` (default) picks by device. Sampled
  requests always run in the loop, each drawn from its own generator seeded by its ``seed``,
  so its text does not depend on the batch it lands in.
- ``quantization: 4bit|8bit`` uses bitsandbytes and needs CUDA: refused otherwise, before any
  work (bitsandbytes would quietly quantize on the CPU and change the text).
- ``threads``: torch threads of the job (the cores Snakemake gave it).
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from ..core import layout
from ..core.errors import ConfigError
from ..core.io import encodable_messages, sha256_file, text_sha256
from ..core.records import Request, Response
from ..core.schema import fill_schema_defaults
from ..models import embedded
from ..models.store import model_store, remembered_sha256
from . import failures
from .base import BaseBackend, LocalModelBackend, chat_template_hash, local_model_schema

log = logging.getLogger(__name__)


def resolve_weights(cfg: dict) -> tuple[str, str | None]:
    """(model folder or hub id, gguf file name or None) for a model entry."""
    path, gguf_file = cfg.get("path"), cfg.get("gguf_file")
    if embedded.is_embedded(path):
        resolved = embedded.resolve(embedded.embedded_name(path))
        if resolved.is_file():
            return str(resolved.parent), resolved.name
        return str(resolved), gguf_file
    return path, gguf_file


def checkpoint_path(folder: str, gguf_file: str, store: Path | None = None) -> Path:
    """Folder of the regular checkpoint converted from ``folder/gguf_file``.

    Keyed by the GGUF's sha256 and the transformers version, so a new file or a new transformers
    gets a new conversion. Cheap (no torch import): the workflow calls it to name the output of
    its `convert_model` rule.
    """
    gguf_path = Path(folder) / gguf_file
    store = store or model_store()
    version = importlib.metadata.version("transformers")
    return store / f"{gguf_path.stem}-{remembered_sha256(gguf_path, store)[:16]}-tf{version}"


def conversion_source(cfg: dict) -> tuple[str, str] | None:
    """(folder, gguf file) when this model's GGUF is to be converted to a checkpoint, else None."""
    if cfg.get("backend") != "hf" or not fill_schema_defaults(CONFIG_SCHEMA, cfg)["convert_gguf"]:
        return None
    folder, gguf_file = resolve_weights(cfg)
    if not gguf_file or not (Path(folder) / gguf_file).is_file():
        return None  # not GGUF, or a hub id that transformers resolves itself
    return folder, gguf_file


def conversion_manifests(cfg: dict) -> list[str]:
    """The `convert_model` output a `generate` job of this model waits for ([] if none)."""
    source = conversion_source(cfg)
    return [] if source is None else [layout.checkpoint_manifest(checkpoint_path(*source).name)]


def ensure_converted(folder: str, gguf_file: str, store: Path | None = None) -> Path:
    """Convert a GGUF model to a regular checkpoint once; return the checkpoint folder.

    Written to a temporary folder and renamed into place, so concurrent jobs never see a
    half-written checkpoint; the loser of a race uses the winner's copy.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    store = store or model_store()
    target = checkpoint_path(folder, gguf_file, store)
    if (target / "config.json").is_file():
        return target
    store.mkdir(parents=True, exist_ok=True)
    gguf_path = Path(folder) / gguf_file
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
        (tmp / "oncoeval-source.json").write_text(
            json.dumps({"gguf": str(gguf_path), "sha256": sha256_file(gguf_path)}, indent=1)
        )
        try:
            os.rename(tmp, target)
        except OSError:
            if not (target / "config.json").is_file():  # lost a race only if the winner finished
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log.info("converted in %.1f s", time.perf_counter() - started)
    return target


def convert_and_describe(gguf: str, manifest: str, expected_name: str | None = None) -> dict:
    """Convert ``gguf`` (once) and write a manifest naming the checkpoint (the rule's output)."""
    gguf_path = Path(gguf)
    started = time.perf_counter()
    existed = (checkpoint_path(str(gguf_path.parent), gguf_path.name) / "config.json").is_file()
    target = ensure_converted(str(gguf_path.parent), gguf_path.name)
    if expected_name is not None and target.name != expected_name:
        raise RuntimeError(
            f"conversion landed in {target}, but the workflow expects {expected_name}"
        )
    info = {
        "gguf": str(gguf_path),
        "gguf_sha256": remembered_sha256(gguf_path),
        "transformers": importlib.metadata.version("transformers"),
        "checkpoint": str(target.resolve()),
        "reused": existed,
        "seconds": round(time.perf_counter() - started, 2),
    }
    Path(manifest).parent.mkdir(parents=True, exist_ok=True)
    Path(manifest).write_text(json.dumps(info, indent=2) + "\n")
    log.info("%s checkpoint %s", "reused" if existed else "converted", target)
    return info


def quantization_problem(cfg: dict, cuda_available: bool) -> str | None:
    """The refusal message for bitsandbytes quantization without CUDA, else None.

    Checked explicitly: bitsandbytes imports on a CPU machine and quietly quantizes there,
    which changes the outputs without any error.
    """
    quant = cfg.get("quantization") or "none"
    if quant == "none" or cuda_available:
        return None
    return (
        f"models[{cfg['id']}].quantization: {quant} needs bitsandbytes on a CUDA GPU, and this "
        "machine has none (bitsandbytes would silently quantize on the CPU and change the "
        "outputs). Use quantization: none here, or run this model's jobs on a GPU node."
    )


def passive_openmp_threads() -> None:
    """Let idle OpenMP threads sleep instead of spinning, unless the user chose otherwise.

    Spinning threads stall each other as soon as another process holds one of the job's cores:
    on a shared 2-core machine, 2 threads with the default policy ran SmolLM2 at 1.4-1.8 tok/s
    one by one and 18-27 tok/s at batch 16, against 8-14 and 31-44 tok/s with PASSIVE (same
    load). Only effective before torch is first imported in the process.
    """
    if "torch" not in sys.modules:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


CONFIG_SCHEMA = local_model_schema(
    {
        "gguf_file": {
            "description": "GGUF file inside `path`.",
            "type": ["string", "null"],
            "default": None,
        },
        "quantization": {
            "description": "bitsandbytes quantization; needs CUDA (checked when the job starts).",
            "enum": ["none", "4bit", "8bit"],
            "default": "none",
        },
        "batch_size": {
            "description": "Requests per forward batch.",
            "type": "integer",
            "minimum": 1,
            "default": 8,
        },
        "convert_gguf": {
            "description": "Convert GGUF weights once to a regular checkpoint for fast loads.",
            "type": "boolean",
            "default": True,
        },
        "engine": {
            "description": (
                "How requests are batched: auto (the fastest measured on the device), loop (the "
                "backend's own), static (transformers.generate batches) or continuous "
                "(transformers' continuous batching); sampled requests always run in the loop. "
                "Not part of the cache key."
            ),
            "enum": ["auto", "loop", "static", "continuous"],
            "default": "auto",
        },
    },
    path="Local folder, hub id, or embedded:NAME (required, no default).",
)


def gguf_chat_template_hash(path) -> str | None:
    """sha256 of the chat template stored in a GGUF's metadata (what transformers loads from
    it), None if it has none: the hash is known before any conversion has run."""
    from gguf import GGUFReader

    field = GGUFReader(path).fields.get("tokenizer.chat_template")
    if field is None or not field.data:
        return None
    return text_sha256(bytes(field.parts[field.data[0]]).decode("utf-8"))


class Backend(LocalModelBackend):
    name = "hf"
    path_keys = (*LocalModelBackend.path_keys, "gguf_file")
    libraries = ("torch", "transformers", "tokenizers", "gguf", "llguidance")
    CONFIG_SCHEMA = CONFIG_SCHEMA
    converts = (".gguf",)
    decoding_keys = (*BaseBackend.decoding_keys, "dtype", "quantization", "batch_size")
    # ``engine`` changes how requests are batched, never their text (oncoeval.backends.engines).
    operational_keys = BaseBackend.operational_keys | {"batch_size", "convert_gguf", "engine"}

    @classmethod
    def extra_inputs(cls, cfg: dict) -> list[str]:
        return super().extra_inputs(cfg) + conversion_manifests(cfg)

    @classmethod
    def conversions(cls, cfg: dict) -> dict[str, str]:
        # Models that share one GGUF share one conversion: the name is the checkpoint's.
        source = conversion_source(cfg)
        if source is None:
            return {}
        return {checkpoint_path(*source).name: str(Path(source[0]) / source[1])}

    @classmethod
    def convert(cls, source: str, manifest: str, name: str) -> dict:
        return convert_and_describe(source, manifest, expected_name=name)

    @classmethod
    def provenance(cls, cfg: dict, root) -> dict:
        folder, gguf_file = resolve_weights(cfg)
        weights = Path(folder) / gguf_file if gguf_file else None
        record = super().provenance(cfg, root)
        if weights is not None and weights.is_file():
            record["weights_file"] = weights.name
            record["weights_sha256"] = sha256_file(weights)
        # The template transformers uses: the folder's, the conversion's, else the GGUF's own.
        template_dirs = [Path(folder)]
        source = conversion_source(cfg)
        if source is not None:
            template_dirs.append(checkpoint_path(*source))
        template_hash = next((h for h in map(chat_template_hash, template_dirs) if h), None)
        if template_hash is None and weights is not None and weights.is_file():
            template_hash = gguf_chat_template_hash(weights)
        record["chat_template_sha256"] = template_hash
        return record

    @classmethod
    def identity(cls, cfg: dict) -> dict:
        ident = super().identity(cfg)
        if embedded.is_embedded(cfg.get("path")):
            # The site-packages path differs between machines; the package version does not.
            name = embedded.embedded_name(cfg["path"])
            ident["path"] = f"embedded:{name}=={embedded.version(name)}"
        return ident

    @classmethod
    def text_logprobs_problem(cls, cfg: dict) -> str | None:
        return None  # a forward pass gives them (``_text_logprobs``)

    @classmethod
    def config_problems(cls, cfg: dict, env=None) -> list[str]:
        if not cfg.get("path"):
            return [
                f"models[{cfg['id']}].path: an hf model needs a local folder, hub id or embedded:NAME"
            ]
        # `engine` is checked by the schema's enum; quantization needs CUDA, which the job checks
        # where it runs (__init__): the DAG may be built on a login node without a GPU.
        if embedded.is_embedded(cfg["path"]):
            try:
                embedded.resolve(embedded.embedded_name(cfg["path"]))
            except ConfigError as exc:
                return [f"models[{cfg['id']}].path: {exc}"]
        return []

    def __init__(self, cfg: dict, threads: int = 1, context: dict | None = None):
        cfg = self.filled(cfg)
        super().__init__(cfg, threads, context)
        passive_openmp_threads()
        import torch

        self.torch = torch
        # Before anything is loaded: refuse quantization on a machine without CUDA.
        problem = quantization_problem(cfg, torch.cuda.is_available())
        if problem:
            raise ConfigError(problem)
        # The job's cores (Snakemake `threads`, from the model's `threads`), not the machine's.
        torch.set_num_threads(max(1, int(threads)))
        from transformers import AutoModelForCausalLM, AutoTokenizer

        quant = cfg.get("quantization") or "none"
        folder, gguf_file = resolve_weights(cfg)
        kwargs: dict = {}
        if gguf_file and conversion_source(cfg):
            folder, gguf_file = str(ensure_converted(folder, gguf_file)), None
        if gguf_file:
            kwargs["gguf_file"] = gguf_file
        if cfg.get("revision"):
            kwargs["revision"] = cfg["revision"]
        model_kwargs = dict(kwargs, dtype=cfg.get("dtype") or "auto")
        if quant != "none":
            from transformers import BitsAndBytesConfig

            model_kwargs["quantization_config"] = BitsAndBytesConfig(
                load_in_4bit=quant == "4bit",
                load_in_8bit=quant == "8bit",
                bnb_4bit_compute_dtype=torch.bfloat16 if quant == "4bit" else None,
            )
            model_kwargs["device_map"] = "auto"
        started = time.perf_counter()
        self.tokenizer = AutoTokenizer.from_pretrained(folder, **kwargs)
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(folder, **model_kwargs)
        if quant == "none" and torch.cuda.is_available():
            self.model.to("cuda")
        self.model.eval()
        self.device = next(self.model.parameters()).device
        self.batch_size = int(cfg["batch_size"])
        from .engines import choose

        self.engine = choose(cfg["engine"], self.device.type)
        self.last_stats: dict = {}
        log.info(
            "loaded %s in %.1f s on %s (%d threads, batch %d, engine %s)",
            self.model_id,
            time.perf_counter() - started,
            self.device,
            torch.get_num_threads(),
            self.batch_size,
            self.engine,
        )

    def _prompt_ids(self, request: Request) -> list[int]:
        ids = self.tokenizer.apply_chat_template(
            encodable_messages(request.messages), add_generation_prompt=True, tokenize=True
        )
        if isinstance(ids, dict) or hasattr(ids, "keys"):
            ids = ids["input_ids"]
        return list(ids)

    def _eos_ids(self) -> list[int]:
        eos = self.model.generation_config.eos_token_id
        if eos is None:
            eos = self.tokenizer.eos_token_id
        return list(eos) if isinstance(eos, list | tuple) else [eos]

    def _response(self, job) -> Response:
        text = job.text
        if text is None:
            text = self.tokenizer.decode(job.tokens, skip_special_tokens=True)
        return Response(
            job.key.request_id,
            self.model_id,
            text,
            finish_reason=job.finish_reason,
            prompt_tokens=len(job.prompt),
            completion_tokens=len(job.tokens),
            latency_s=round(job.ended - job.started, 4),
            # A shape llguidance could not follow to the end leaves the rest unconstrained.
            structured_fallback=getattr(job.constraint, "problem", None) or None,
        )

    def generate(self, requests: list[Request]) -> Iterator[Response]:
        """Answer ``requests`` with the chosen engine (see oncoeval.backends.engines).

        Greedy requests go to ``self.engine``; sampled ones to the loop, where each row draws
        from its own generator seeded by the request's ``seed``.
        """
        from .decoding import DecodeParams, Job
        from .engines import Decoder

        jobs = []
        for request in requests:
            if request.params.get("text_logprobs"):
                yield self._text_logprobs(request)
                continue
            try:
                jobs.append(
                    Job(
                        request,
                        self._prompt_ids(request),
                        DecodeParams.from_params(request.params),
                        constraint=self._constraint(request),
                    )
                )
            except Exception as exc:  # noqa: BLE001 (a bad request must not stop the others)
                yield self._error(request, exc)
        decoder = Decoder(
            self.engine,
            self.model,
            eos_ids=self._eos_ids(),
            pad_id=self.tokenizer.pad_token_id,
            batch_size=self.batch_size,
            decode=lambda ids: self.tokenizer.decode(ids, skip_special_tokens=True),
        )
        pending = {id(job): job for job in jobs}
        try:
            for job in decoder.run(jobs):
                pending.pop(id(job), None)
                yield self._response(job)
        except Exception as exc:  # noqa: BLE001 (record the failure for every unfinished request)
            log.exception("generation failed; %d requests left unanswered", len(pending))
            for job in pending.values():
                yield self._error(job.key, exc)
        self.last_stats = decoder.stats
        log.info("decoding: %s", self.last_stats)

    def _text_logprobs(self, request: Request) -> Response:
        """The log-probability of each token of the last message's text, read as plain text
        (no chat template) after the tokenizer's BOS token where it has one (else from the
        second token on); one forward pass, nothing generated."""
        torch = self.torch
        started = time.perf_counter()
        try:
            text = request.messages[-1]["content"]
            ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
            bos = self.tokenizer.bos_token_id
            ids = ([bos] if bos is not None else []) + list(ids)
            x = torch.tensor([ids], device=self.device)
            with torch.no_grad():
                logits = self.model(x).logits[0, :-1].float()
            picked = torch.log_softmax(logits, dim=-1).gather(1, x[0, 1:, None])[:, 0]
        except Exception as exc:  # noqa: BLE001 (a bad request must not stop the others)
            return self._error(request, exc)
        return Response(
            request.request_id,
            self.model_id,
            "",
            finish_reason="logprobs",
            prompt_tokens=len(ids),
            completion_tokens=0,
            latency_s=round(time.perf_counter() - started, 4),
            token_logprobs=[round(float(v), 5) for v in picked.tolist()],
        )

    def _constraint(self, request: Request):
        """The llguidance matcher of a shaped request (None otherwise); needs the own loop."""
        from ..core.shapes import shape_of
        from .constraints import ConstraintFactory

        if shape_of(request.params) is None:
            return None
        if getattr(self, "_constraints", None) is None:
            vocab = self.model.get_output_embeddings().weight.shape[0]
            self._constraints = ConstraintFactory(self.tokenizer, vocab, self._eos_ids())
        return self._constraints.for_params(request.params)

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
        self.model = None
