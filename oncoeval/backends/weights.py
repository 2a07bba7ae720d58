"""A local model's weights, staged once on the submitting host before any job loads them.

Compute nodes are often offline, and a 70B model's GPU job is a long queue wait: a missing
shard or a file that changed since the revision was pinned should stop the run before any of
that. The workflow's `stage_weights` rule (a local rule, so it runs where Snakemake runs, e.g.
a cluster's login node) calls :func:`stage` once per local model (hf, vllm); every `generate`
job of the model waits for its record, ``results/models/weights/{model}.json``, which
results/provenance.json then carries.

What it resolves: the folder the backend loads (a local folder, the GGUF of a file or of an
embedded model, or a hub id's snapshot in the local Hugging Face cache; never downloaded here),
the revision (a hub snapshot's commit), the sha256 of every weights file, of the tokenizer's
files and of the chat template. What fails it, naming the model and the file:

- no weights file; a shard that the folder's index lists but that is missing;
- a hub id that is not in the local cache at the pinned ``revision``;
- a hub snapshot file whose content is no longer the one the revision names (the cache stores
  each large file under its sha256).

Hashes are remembered in the model store by (name, size, mtime), so a re-staging after a run
costs a stat per file, not a read of every weight.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..core.errors import ConfigError
from ..models.store import remembered_sha256
from .base import weights_record_path

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth")
INDEX_FILES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "tokenizer.model",
    "special_tokens_map.json",
    "vocab.json",
    "merges.txt",
    "chat_template.jinja",
)
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class WeightsError(ConfigError):
    """The weights of a model are missing or differ from its pinned revision."""

    def __init__(self, model: str, file, problem: str):
        super().__init__(f"model {model!r}: {file}: {problem}")


#: The keys of a model entry that name its weights (what `stage_weights` depends on; editing any
#: other key, e.g. batch_size or dtype, stages nothing again).
STAGING_KEYS = ("id", "backend", "path", "revision", "gguf_file")


def record_path(model_id: str) -> str:
    return weights_record_path(model_id)


def staging_keys(cfg: dict) -> dict:
    return {k: cfg[k] for k in STAGING_KEYS if cfg.get(k) is not None}


def locate(cfg: dict) -> tuple[Path, list[str] | None, str | None]:
    """(folder, the weights files the backend loads or None for all of the folder's, the hub
    snapshot's commit or None). Reads no file and imports no engine."""
    from ..models import embedded

    path, mid = cfg.get("path") or "", cfg["id"]
    gguf = cfg.get("gguf_file")
    if embedded.is_embedded(path):
        resolved = embedded.resolve(embedded.embedded_name(path))
        if resolved.is_file():
            return resolved.parent, [resolved.name], None
        return resolved, [gguf] if gguf else None, None
    local = Path(path).expanduser()
    if local.is_file():
        return local.parent, [local.name], None
    if local.is_dir():
        return local, [gguf] if gguf else None, None
    if path.startswith(("/", ".", "~")) or path.count("/") != 1:
        raise WeightsError(mid, path, "no such file or folder (and not a hub id org/name)")
    snapshot = hub_snapshot(path, cfg.get("revision"))
    if snapshot is None:
        pinned = f" at revision {cfg['revision']}" if cfg.get("revision") else ""
        raise WeightsError(
            mid,
            path,
            f"not in the local Hugging Face cache{pinned} ({hub_cache()}); compute nodes may be "
            f"offline: download it once on this host (`hf download {path}"
            + (f" --revision {cfg['revision']}`)" if cfg.get("revision") else "`)"),
        )
    return snapshot, [gguf] if gguf else None, snapshot.name


def hub_cache() -> Path:
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def hub_snapshot(repo_id: str, revision: str | None) -> Path | None:
    """The snapshot folder of ``repo_id`` at ``revision`` (a commit, or a branch or tag the
    cache has a ref for; ``main`` when None) in the local cache, None if absent."""
    repo = hub_cache() / f"models--{repo_id.replace('/', '--')}"
    revision = revision or "main"
    ref = repo / "refs" / revision
    commit = ref.read_text().strip() if ref.is_file() else revision
    folder = repo / "snapshots" / commit
    return folder if folder.is_dir() else None


def fingerprint(cfg: dict) -> str:
    """A cheap signature of the weights on disk (names, sizes, mtimes; a stat per file), so that
    `stage_weights` runs again when a file changes. Problems are left to :func:`stage`."""
    try:
        folder, files, commit = locate(cfg)
    except (ConfigError, OSError) as exc:
        return f"unresolved: {exc}"
    parts = [str(folder), commit or ""]
    for name in sorted(files or os.listdir(folder)):
        try:
            stat = (folder / name).stat()
            parts.append(f"{name}:{stat.st_size}:{stat.st_mtime_ns}")
        except OSError:
            parts.append(f"{name}:missing")
    return "|".join(parts)


def _weights_files(mid: str, folder: Path, files: list[str] | None) -> list[str]:
    if files is None:
        files = sorted(
            p.name for p in folder.iterdir() if p.name.endswith(WEIGHT_SUFFIXES) and p.is_file()
        )
        for index in INDEX_FILES:
            if (folder / index).is_file():
                try:
                    shards = set(json.loads((folder / index).read_text())["weight_map"].values())
                except (ValueError, KeyError, TypeError) as exc:
                    raise WeightsError(mid, folder / index, f"unreadable index ({exc})") from exc
                for shard in sorted(shards):
                    if not (folder / shard).is_file():
                        raise WeightsError(mid, folder / shard, f"missing (listed in {index})")
        if not files:
            raise WeightsError(mid, folder, f"no weights file ({', '.join(WEIGHT_SUFFIXES)})")
        return files
    for name in files:
        if not (folder / name).is_file():
            raise WeightsError(mid, folder / name, "missing")
    return list(files)


def _check_blob(mid: str, path: Path, digest: str, commit: str) -> None:
    """A hub snapshot's large file is a link to ``blobs/<its sha256>``: its content must match."""
    if not path.is_symlink():
        return
    blob = Path(os.readlink(path)).name
    if _SHA256.match(blob) and blob != digest:
        raise WeightsError(
            mid,
            path,
            f"differs from revision {commit} (sha256 {digest[:12]}, expected {blob[:12]})",
        )


def stage(cfg: dict) -> dict:
    """Resolve and check one local model's weights; the record `stage_weights` writes."""
    from .base import chat_template_hash

    mid = cfg["id"]
    folder, files, commit = locate(cfg)
    weights = {}
    for name in _weights_files(mid, folder, files):
        digest = remembered_sha256(folder / name)
        if commit:
            _check_blob(mid, folder / name, digest, commit)
        weights[name] = {"size": (folder / name).stat().st_size, "sha256": digest}
    tokenizer = {}
    for name in TOKENIZER_FILES:
        if (folder / name).is_file():
            tokenizer[name] = remembered_sha256(folder / name)
            if commit:
                _check_blob(mid, folder / name, tokenizer[name], commit)
    template = chat_template_hash(folder)
    if template is None and any(n.endswith(".gguf") for n in weights):
        from .hf import gguf_chat_template_hash

        gguf = folder / next(n for n in weights if n.endswith(".gguf"))
        template = gguf_chat_template_hash(gguf)
    return {
        "model": mid,
        "backend": cfg["backend"],
        "path": cfg.get("path"),
        "folder": str(folder),
        # A hub snapshot's commit (the pinned revision resolved); a local folder has none.
        "revision": commit or cfg.get("revision"),
        "weights": weights,
        "tokenizer_sha256": tokenizer,
        "chat_template_sha256": template,
    }
