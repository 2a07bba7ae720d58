"""Model backends behind one small interface.

A backend is a class with:

- ``identity(cfg) -> dict`` (classmethod): the settings that define the model's outputs; part of
  every cache key and of the `generate` rule's params.
- ``config_problems(cfg) -> list[str]`` (classmethod): what stops a run before any job starts
  (a missing API key variable, quantization without CUDA), as sentences naming the key.
- ``__init__(cfg, threads)``: load the model or client once per job.
- ``generate(requests) -> Iterator[Response]``: answer requests, yielding each response as it
  finishes (any order). A request that fails for good yields a Response with ``error`` set.

Backends are looked up by name; their modules are imported lazily so that building the DAG never
imports torch. Adding a backend means one module and one line in ``BACKEND_MODULES``.
"""

from __future__ import annotations

import importlib

from ..errors import ConfigError

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
