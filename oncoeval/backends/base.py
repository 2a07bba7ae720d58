"""Shared base class for backends (see the package docstring for the interface)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path

from ..core import layout
from ..core.io import text_sha256
from ..core.records import Request, Response
from ..core.schema import fill_schema_defaults
from . import failures

# Words of failed calls' errors that more than one backend writes.
CONTENT_FILTERED = "content filtered by the provider"
EMPTY_ANSWER = "empty answer"
CAP_REACHED = "max_cost_usd reached"


def no_text_failure(text: str | None, finish_reason: str | None) -> tuple[str, str] | None:
    """(kind, error) of a reply that is no answer, or None when it is one; a rule shared by
    every backend.

    An answer that carries no text is a failed call, never a score: the provider's content
    filter (``finish_reason`` ``content_filter``, with or without text) and a reply whose
    content is null with no refusal. ``text`` is the reply's content (a refusal's text counts:
    a refusal is an answer, kept with ``Response.refused`` set). An empty string with another
    ``finish_reason`` is the model's own answer (it stopped at once; asked again it would stop
    again) and stays an answer.
    """
    if finish_reason == "content_filter":
        return failures.FILTER, (
            f"{CONTENT_FILTERED} (finish_reason content_filter): the provider withheld or cut "
            "the answer"
        )
    if text is None:
        return failures.EMPTY, f"{EMPTY_ANSWER}: the reply had no text (content null, no refusal)"
    return None


def chat_template_hash(folder) -> str | None:
    """sha256 of the chat template text of a local tokenizer folder, None if it has none."""
    folder = Path(folder)
    jinja = folder / "chat_template.jinja"
    if jinja.is_file():
        return text_sha256(jinja.read_bytes().decode("utf-8"))
    config = folder / "tokenizer_config.json"
    if config.is_file():
        template = json.loads(config.read_text(encoding="utf-8")).get("chat_template")
        if isinstance(template, str) and template:
            return text_sha256(template)
    return None


def weights_record_path(model_id: str) -> str:
    """Where the `stage_weights` rule (.weights) records a local model's weights; here, in the
    base of the backends that name it as their jobs' input, so that neither imports the other."""
    return layout.weights_record(model_id)


class BaseBackend:
    name = "base"

    #: This backend's keys of a model entry (JSON Schema ``properties`` and ``required``). The
    #: workflow's schema (oncoeval.config.checks.config_schema) applies it to every entry whose
    #: ``backend`` is this one; ``$ref: "#/$defs/..."`` points into config/config.schema.yaml.
    CONFIG_SCHEMA: dict = {"properties": {}}

    #: Python distributions its answers depend on; their versions go into provenance.json.
    libraries: tuple[str, ...] = ()

    #: ``phi_safe`` of an entry that leaves it unset: True only for backends that keep the data
    #: on the machine.
    phi_safe_default = False

    #: Where its models run, as exports record it (Every Eval Ever's ``deployment_type``):
    #: "self_deployed" (on the job's machine) or "externally_managed" (a provider's API); None
    #: when the backend cannot say (replayed answers came from anywhere).
    deployment: str | None = None

    #: Whether its models' weights are open files (a local model's), as exports record it.
    open_weights = False

    #: Whether its answers are read from files, not generated (replay): the summary marks such
    #: models, and their answers bypass the cache (``cacheable``).
    replays = False

    #: Whether its engine is loaded by one job at a time, and answers the model's other request
    #: sets while loaded (a local model; oncoeval.workflow.waves).
    shares_engine = False

    #: The key of a model entry that holds its server's URL (an API's ``base_url``), named by the
    #: cures of failed calls (oncoeval.backends.failures); None for a backend without one.
    url_key: str | None = None

    #: model-config keys that never change a response (operational settings: what is allowed,
    #: spent, scheduled or accepted); everything else in the model's entry is identity, part of
    #: every cache key and job signature. Each backend adds its own (concurrency, timeouts...).
    operational_keys: frozenset[str] = frozenset(
        {
            "id",
            "phi_safe",
            "resources",
            "threads",
            "max_failed_share",
            "max_cost_usd",
            "training_cutoff",
        }
    )

    #: keys of a model entry recorded as its decoding settings in provenance.json: the model
    #: schema's own, then the backend's (in this order).
    decoding_keys: tuple[str, ...] = ("max_new_tokens", "generation")

    #: keys of a model entry that name input files, hashed into provenance.json's
    #: ``input_files_sha256`` (replayed answers); weights are recorded by `stage_weights`.
    input_keys: tuple[str, ...] = ()

    #: keys of a model entry that hold a path, in which `~` and `$VAR` are expanded
    #: (oncoeval.config.checks.expand_paths).
    path_keys: tuple[str, ...] = ()

    @classmethod
    def spend_round(cls, cfg: dict) -> int | None:
        """Requests sent between two checks of the spend cap (``max_cost_usd``); None: all at
        once (a backend whose calls cost nothing never reaches a cap)."""
        return None

    @classmethod
    def identity(cls, cfg: dict) -> dict:
        return {k: v for k, v in sorted(cfg.items()) if k not in cls.operational_keys}

    @classmethod
    def config_problems(cls, cfg: dict, env=None) -> list[str]:
        return []

    @classmethod
    def cost_bounds(
        cls, cfg: dict, prompt_tokens: int, max_new_tokens: int
    ) -> tuple[float | None, float | None]:
        """USD range of calls with these token counts, from every answer empty to every answer
        at its cap (``make estimate``); (None, None) when unknown. Nothing paid per call: 0."""
        return 0.0, 0.0

    @classmethod
    def batch_cost_bounds(
        cls, cfg: dict, prompt_tokens: int, max_new_tokens: int
    ) -> tuple[float | None, float | None]:
        """:meth:`cost_bounds` of the same calls sent through the provider's Batch API; a backend
        without one costs what its calls cost."""
        return cls.cost_bounds(cfg, prompt_tokens, max_new_tokens)

    @classmethod
    def batch_mode(cls, cfg: dict) -> bool:
        """Whether this model's jobs go through the provider's Batch API."""
        return False

    @classmethod
    def provenance(cls, cfg: dict, root) -> dict:
        """What identifies this model's outputs beyond its settings (weights and chat-template
        hashes, replayed files), for results/provenance.json; ``root`` is the workdir. Every
        record names the weights' pinned ``revision`` (None where the backend has none)."""
        return {"revision": None}

    @classmethod
    def answers_digest(cls, cfg: dict, study: str, requestset: str) -> str | None:
        """Digest of stored answers served for one job (replay); None for models."""
        return None

    @classmethod
    def filled(cls, cfg: dict) -> dict:
        """The model entry with this backend's schema defaults filled in."""
        return fill_schema_defaults(cls.CONFIG_SCHEMA, cfg)

    @classmethod
    def job_resources(cls, cfg: dict, machine: dict) -> dict:
        """Scheduler resources of this model's `generate` jobs.

        ``machine`` is the entry's ``resources`` block with the schema's defaults filled in (what
        a backend that loads the model on the job's machine asks for). By default a light job.
        """
        return {"mem_mb": 1000, "runtime": 30}

    @classmethod
    def job_threads(cls, cfg: dict) -> int:
        """Cores one `generate` job of this model asks Snakemake for."""
        return 1

    @classmethod
    def extra_inputs(cls, cfg: dict) -> list[str]:
        """Files a `generate` job of this model waits for besides its requests (rule outputs)."""
        return []

    @classmethod
    def conversions(cls, cfg: dict) -> dict[str, str]:
        """Name -> source file of each one-time conversion this model needs before its jobs
        (the `convert_model` rule writes ``results/models/{name}.json`` for each)."""
        return {}

    #: Suffixes of the source files this backend converts in `convert_model` (e.g. ".gguf").
    converts: tuple[str, ...] = ()

    @classmethod
    def convert(cls, source: str, manifest: str, name: str) -> dict:
        """Do one conversion listed by ``conversions`` and write its manifest."""
        raise NotImplementedError(f"backend {cls.name!r} converts nothing")

    #: False for backends whose answers are not model calls (replay): they bypass the cache.
    cacheable = True

    @classmethod
    def text_logprobs_problem(cls, cfg: dict) -> str | None:
        """Why this model cannot answer a ``text_logprobs`` request (the per-token
        log-probabilities of a given text, oncoeval.core.records); None when it can."""
        return f"log-probabilities of a given text not available from the {cls.name} backend"

    def __init__(self, cfg: dict, threads: int = 1, context: dict | None = None):
        self.cfg = cfg
        self.model_id = cfg["id"]
        self.threads = threads
        self.context = context or {}

    def generate(self, requests: list[Request]) -> Iterator[Response]:
        raise NotImplementedError

    def close(self) -> None:
        """Release the model or client; called once at the end of a job."""


DTYPES = ["auto", "float32", "bfloat16", "float16"]

#: The keys every local-model backend (hf, vllm) shares, in the order its schema lists them.
LOCAL_MODEL_KEYS = {
    "path": {"description": "Local folder or hub id (required, no default).", "type": "string"},
    "revision": {
        "description": "Hub revision (commit) pinned for reproducibility.",
        "type": ["string", "null"],
        "default": None,
    },
    "dtype": {"description": "Weights dtype.", "enum": DTYPES, "default": "auto"},
    "threads": {
        "description": "CPU threads per job (the job asks Snakemake for this many cores).",
        "type": "integer",
        "minimum": 1,
        "default": 2,
    },
    "resources": {"$ref": "#/$defs/resources"},
}


def local_model_schema(own: dict, path: str | None = None) -> dict:
    """The ``CONFIG_SCHEMA`` of a local-model backend: the shared keys, then its ``own``;
    ``path`` rewords the path key's description (what else it accepts)."""
    properties = copy.deepcopy(LOCAL_MODEL_KEYS)
    if path is not None:
        properties["path"]["description"] = path
    properties.update(own)
    properties["resources"] = properties.pop("resources")  # listed last, as by every backend
    return {"properties": properties, "required": ["path"]}


class LocalModelBackend(BaseBackend):
    """A backend that loads the model on the job's machine (hf, vllm): its keys start with
    ``LOCAL_MODEL_KEYS``, and its jobs ask for the entry's ``resources`` block and its
    ``threads``."""

    path_keys = ("path",)  # a local folder (or a hub id, left as it is)

    phi_safe_default = True  # the model runs on the job's machine
    deployment = "self_deployed"
    open_weights = True
    shares_engine = True

    @classmethod
    def job_resources(cls, cfg: dict, machine: dict) -> dict:
        out = {
            "gpu": int(machine["gpu"]),
            "mem_mb": int(machine["mem_mb"]),
            "runtime": int(machine["runtime"]),
        }
        for key in ("constraint", "slurm_partition", "slurm_extra"):
            if machine.get(key):
                out[key] = machine[key]
        # The SLURM plugin turns gpu_model into --gpus=MODEL:N; without a GPU count it would
        # ask for MODEL:0, so a model only counts when GPUs are asked for.
        if machine.get("gpu_model") and out["gpu"] > 0:
            out["gpu_model"] = machine["gpu_model"]
        return out

    @classmethod
    def job_threads(cls, cfg: dict) -> int:
        return int(cls.filled(cfg)["threads"])

    @classmethod
    def extra_inputs(cls, cfg: dict) -> list[str]:
        # The weights, staged and checked once on the submitting host (.weights).
        return [weights_record_path(cfg["id"])]

    @classmethod
    def provenance(cls, cfg: dict, root) -> dict:
        # A hub id names its weights by the pinned revision; a subclass adds file hashes.
        return {**super().provenance(cfg, root), "revision": cfg.get("revision")}
