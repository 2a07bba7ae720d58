"""``results/provenance.json``: what produced the results, so a table traces back to its sources.

Per model: its backend and identity (the settings its answers depend on), the revision or the
hash of its weights file, the hash of its chat template where a local tokenizer has one, and its
decoding settings. For the run: library versions, every seed in the config, and the sha256 of
every input file the config names (data, prompts, replayed answers).
"""

from __future__ import annotations

import hashlib
import html
import importlib.metadata
import json
import platform
from pathlib import Path

from ..backends import get_backend
from ..backends import hf as hf_backend
from . import tables

LIBRARIES = (
    "snakemake", "pandas", "numpy", "scipy", "scikit-learn", "torch", "transformers",
    "tokenizers", "gguf", "openai", "vllm", "sacrebleu", "rouge-score", "matplotlib",
)  # fmt: skip
DECODING_KEYS = ("max_new_tokens", "generation", "dtype", "quantization", "batch_size", "reasoning")


def sha256_file(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def library_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def seeds(config, prefix: str = "") -> dict:
    """Every ``seed`` key of the config, by its dotted path."""
    found = {}
    if isinstance(config, dict):
        for key, value in config.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if key == "seed" and not isinstance(value, dict | list):
                found[path] = value
            else:
                found.update(seeds(value, path))
    elif isinstance(config, list):
        for i, value in enumerate(config):
            found.update(seeds(value, f"{prefix}[{i}]"))
    return found


def input_files(config, root: Path) -> dict[str, str]:
    """sha256 of every existing file (or file inside a folder) named by a config string."""
    out: dict[str, str] = {}

    def visit(value):
        if isinstance(value, dict):
            for v in value.values():
                visit(v)
        elif isinstance(value, list):
            for v in value:
                visit(v)
        elif isinstance(value, str) and value and not value.startswith(("embedded:", "http")):
            path = root / value
            try:
                if path.is_file():
                    out[value] = sha256_file(path)
                elif path.is_dir() and value not in ("results", ".") and "cache" not in value:
                    for file in sorted(p for p in path.rglob("*") if p.is_file()):
                        out[str(Path(value) / file.relative_to(path))] = sha256_file(file)
            except OSError:
                pass

    studies = config.get("studies") or {}
    enabled = {s: b for s, b in studies.items() if isinstance(b, dict) and b.get("enabled")}
    skip = ("cache_dir", "model_store", "studies")
    visit({k: v for k, v in config.items() if k not in skip})
    visit(enabled)
    return dict(sorted(out.items()))


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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


def gguf_chat_template_hash(path) -> str | None:
    """sha256 of the chat template stored in a GGUF's metadata (what transformers loads from
    it), None if it has none: the hash is known before any conversion has run."""
    from gguf import GGUFReader

    field = GGUFReader(path).fields.get("tokenizer.chat_template")
    if field is None or not field.data:
        return None
    return text_sha256(bytes(field.parts[field.data[0]]).decode("utf-8"))


def model_record(cfg: dict, root: Path) -> dict:
    backend = cfg["backend"]
    record = {
        "backend": backend,
        "identity": get_backend(backend).identity(cfg),
        "decoding": {k: cfg[k] for k in DECODING_KEYS if cfg.get(k) not in (None, {}, "")},
        "revision": cfg.get("revision"),
    }
    if backend == "hf":
        folder, gguf_file = hf_backend.resolve_weights(cfg)
        weights = Path(folder) / gguf_file if gguf_file else None
        if weights is not None and weights.is_file():
            record["weights_file"] = weights.name
            record["weights_sha256"] = sha256_file(weights)
        template_dirs = [Path(folder)]
        source = hf_backend.conversion_source(cfg)
        if source is not None:
            template_dirs.append(hf_backend.checkpoint_path(*source))
        template_hash = next((h for h in map(chat_template_hash, template_dirs) if h), None)
        if template_hash is None and weights is not None and weights.is_file():
            template_hash = gguf_chat_template_hash(weights)
        record["chat_template_sha256"] = template_hash
    elif backend == "replay":
        record["replayed_files"] = input_files({"path": cfg["path"]}, root)
        record["note"] = "stored answers replayed, not a model"
    elif backend == "openai":
        record["chat_template_sha256"] = None
        record["note"] = "served by an API: weights and chat template are the provider's"
    return record


def provenance(config: dict, models: dict[str, dict], root=".") -> dict:
    root = Path(root)
    return {
        "models": {mid: model_record(cfg, root) for mid, cfg in sorted(models.items())},
        "libraries": library_versions(),
        "seeds": seeds(config),
        "input_files_sha256": input_files(config, root),
    }


def provenance_page(record: dict) -> str:
    body = (
        "<p class='caption'>What produced the results: each model's identity, weights and "
        "chat-template hashes and decoding settings; library versions; seeds; the sha256 of "
        "every input file. The same record is in <code>results/provenance.json</code>.</p>"
        f"<pre>{html.escape(json.dumps(record, indent=2, sort_keys=True, default=str))}</pre>"
    )
    return tables.page("Provenance", body)


def write(config: dict, models: dict[str, dict], out_json, out_html, root=".") -> dict:
    record = provenance(config, models, root)
    Path(out_json).write_text(json.dumps(record, indent=2, sort_keys=True, default=str) + "\n")
    Path(out_html).write_text(provenance_page(record), encoding="utf-8")
    return record
