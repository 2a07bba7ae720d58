"""The model store (``model_store`` in the config): GGUF conversions and the remembered hashes
of weights files, shared by the ``hf`` backend and weights staging (oncoeval.backends.weights)."""

from __future__ import annotations

import os
from pathlib import Path

from ..core.io import sha256_file
from ..core.schema import top_level_default


def model_store() -> Path:
    """Where GGUF conversions live: $ONCOEVAL_MODEL_STORE (the workflow sets it from the
    config's ``model_store``), else that key's default."""
    return Path(os.environ.get("ONCOEVAL_MODEL_STORE") or top_level_default("model_store"))


def remembered_sha256(path: Path, store: Path | None = None) -> str:
    """sha256 of a weights file (a GGUF, a safetensors shard), remembered in the store by
    (name, size, mtime).

    The workflow asks for it whenever it builds the DAG or stages weights; hashing a multi-GB
    file every time would make a dry run slow.
    """
    stat = path.stat()
    memo = (store or model_store()) / ".sha256" / f"{path.name}-{stat.st_size}-{stat.st_mtime_ns}"
    try:
        return memo.read_text().strip()
    except OSError:
        pass
    digest = sha256_file(path)
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        tmp = memo.with_name(f".{memo.name}.{os.getpid()}")
        tmp.write_text(digest)
        os.replace(tmp, memo)
    except OSError:  # a read-only store still works, only slower
        pass
    return digest
