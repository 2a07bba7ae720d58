"""Model backends behind one small interface.

A backend is a module with a class ``Backend`` (a subclass of ``base.BaseBackend``) that owns
every fact about its models:

- ``CONFIG_SCHEMA``: its keys of a model entry (JSON Schema); the workflow's schema applies it to
  entries with ``backend: <name>`` (oncoeval.config.checks.config_schema), so validation, defaults and
  the error messages come from it.
- ``phi_safe_default``: whether an entry that leaves ``phi_safe`` unset may receive PHI.
- ``job_resources(cfg, machine)`` and ``job_threads(cfg)`` (classmethods): what the model's
  `generate` jobs ask the scheduler for.
- ``extra_inputs(cfg)``, ``conversions(cfg)`` and ``convert(...)`` (classmethods): files a
  `generate` job waits for, such as a GGUF converted once by the `convert_model` rule.
- ``identity(cfg) -> dict`` (classmethod): the settings that define the model's outputs; part of
  every cache key and of the `generate` rule's params.
- ``cost_bounds(cfg, prompt_tokens, max_new_tokens)``, ``provenance(cfg, root)`` and
  ``libraries`` (classmethods, attribute): what the estimate and results/provenance.json record.
- ``config_problems(cfg) -> list[str]`` (classmethod): what stops a run before any job starts
  (a missing API key variable, quantization without CUDA), as sentences naming the key.
- ``deployment``, ``open_weights``, ``replays``, ``shares_engine``, ``url_key`` (attributes):
  what the export, the summary, the engine waves and the cures of failed calls ask of it
  (``base.BaseBackend`` says what each means).
- ``__init__(cfg, threads)``: load the model or client once per job.
- ``generate(requests) -> Iterator[Response]``: answer requests, yielding each response as it
  finishes (any order). A request that fails for good yields a Response with ``error`` set
  and its ``error_kind`` (oncoeval.backends.failures.KINDS), which picks the cure the user is told.

Backends are looked up by name; their modules import no model library at import time, so that
building the DAG never imports torch. Adding a backend means one module and one line in
``BACKEND_MODULES`` (CONTRIBUTING.md, "Adding a backend").
"""

from __future__ import annotations

import importlib
from pathlib import Path

from ..core.errors import ConfigError

BACKEND_MODULES = {
    "hf": "oncoeval.backends.hf",
    "openai": "oncoeval.backends.openai_api",
    "replay": "oncoeval.backends.replay",
    "vllm": "oncoeval.backends.vllm_offline",
}


def get_backend(name: str):
    """Return the backend class registered under ``name``."""
    try:
        module = importlib.import_module(BACKEND_MODULES[name])
    except KeyError:
        raise ConfigError(
            f"unknown backend {name!r}; known backends: {sorted(BACKEND_MODULES)}"
        ) from None
    return module.Backend


def backends() -> dict:
    """Name -> backend class of every registered backend, in registry order."""
    return {name: get_backend(name) for name in BACKEND_MODULES}


def extra_inputs(cfg: dict) -> list[str]:
    """Files a `generate` job of this model waits for besides its requests (e.g. a conversion)."""
    return get_backend(cfg["backend"]).extra_inputs(cfg)


def conversions(models: dict[str, dict]) -> dict[str, str]:
    """Name -> source file of every one-time conversion these models need (`convert_model`).

    Models that share a source share its conversion. A model whose source cannot be resolved is
    left out here; the config check reports it.
    """
    out: dict[str, str] = {}
    for cfg in models.values():
        try:
            out.update(get_backend(cfg["backend"]).conversions(cfg))
        except ConfigError:
            continue
    return out


def convert(source: str, manifest: str, name: str) -> dict:
    """Run one conversion listed by ``conversions``, by the backend that converts such files."""
    for backend in backends().values():
        if Path(source).suffix in backend.converts:
            return backend.convert(source, manifest, name)
    raise ConfigError(f"no backend converts {source}")
