"""``results/provenance.json``: what produced the results, so a table traces back to its sources.

Per model: its backend and identity (the settings its answers depend on), its decoding settings
and what its backend records (a local model's revision, weights and chat-template hashes; the
files a replay serves). For the run: library versions, every seed in the config, and the sha256 of
every input file the config names (data, prompts, replayed answers) and of each enabled study's
prompt templates (config/prompts/<study>/, read by name); the project's version and git commit
(with ``dirty`` when tracked files differ from it), and the config the run used, as filled.
"""

from __future__ import annotations

import copy
import html
import importlib.metadata
import json
import platform
import subprocess
from pathlib import Path

import pandas as pd

from .. import __version__
from ..backends import backends, get_backend
from ..config import checks as oc
from ..config.checks import STUDY_MODEL_KEYS
from ..core import layout
from ..core.io import files_sha256
from ..exposure import facts as exposure_facts
from ..studies import contract
from . import tables

# The workflow's own; each backend adds the libraries its answers depend on.
LIBRARIES = (
    "snakemake", "pandas", "numpy", "scipy", "scikit-learn", "sacrebleu", "rouge-score",
    "matplotlib",
)  # fmt: skip


def library_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    by_backends = [lib for backend in backends().values() for lib in backend.libraries]
    for name in dict.fromkeys([*LIBRARIES, *by_backends]):
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
    """sha256 of every existing file (or file inside a folder) named by a config string, and of
    each enabled study's prompt templates."""
    out: dict[str, str] = {}

    def visit(value):
        if isinstance(value, dict):
            for v in value.values():
                visit(v)
        elif isinstance(value, list):
            for v in value:
                visit(v)
        elif isinstance(value, str) and value and not value.startswith(("embedded:", "http")):
            if (root / value).is_dir() and (value in (layout.RESULTS, ".") or "cache" in value):
                return  # outputs and caches, not inputs
            try:
                out.update(files_sha256(value, root))
            except OSError:
                pass

    # Only what is declared an input: the ad-hoc sets, each model's input keys (its backend's
    # `input_keys`), the enabled studies' settings but for the keys that name models (a model id
    # `..` or one that names a folder is no input), and their prompt templates.
    studies = config.get("studies") or {}
    enabled = {s: b for s, b in studies.items() if isinstance(b, dict) and b.get("enabled")}
    visit(list((config.get("adhoc") or {}).values()))
    for cfg in config.get("models") or []:
        keys = get_backend(cfg["backend"]).input_keys if cfg.get("backend") in backends() else ()
        visit([cfg.get(k) for k in keys])
    for study, block in enabled.items():
        visit(_without_model_keys(study, block))
    # The templates a study reads by name, which no config key names.
    visit([contract.prompt_files(study, block) for study, block in enabled.items()])
    return dict(sorted(out.items()))


def _without_model_keys(study: str, block: dict) -> dict:
    """A study block without the keys that name models (``evaluate``, judges, jurors)."""
    block = copy.deepcopy(block)
    for dotted in ("evaluate", *STUDY_MODEL_KEYS.get(study, ())):
        *parents, last = dotted.split(".")
        holder = block
        for part in parents:
            holder = holder.get(part) if isinstance(holder, dict) else None
        if isinstance(holder, dict):
            holder.pop(last, None)
    return block


def model_record(cfg: dict, root: Path) -> dict:
    backend = get_backend(cfg["backend"])
    return {
        "backend": cfg["backend"],
        "identity": backend.identity(cfg),
        "decoding": {k: cfg[k] for k in backend.decoding_keys if cfg.get(k) not in (None, {}, "")},
        # The maker's stated training cutoff (descriptive, not identity; docs/exposure.md).
        **({"training_cutoff": cfg["training_cutoff"]} if cfg.get("training_cutoff") else {}),
        **backend.provenance(cfg, root),
        **_staged(cfg, root),
    }


def _staged(cfg: dict, root: Path) -> dict:
    """A local model's weights as `stage_weights` resolved them (oncoeval.backends.weights), if staged."""
    from ..backends.weights import record_path

    path = root / record_path(cfg["id"])
    if not path.is_file():
        return {}
    return {"staged_weights": json.loads(path.read_text(encoding="utf-8"))}


def project_commit(source: Path | None = None) -> dict:
    """The project's version, and the git commit of its source (None outside a git checkout,
    e.g. an installed copy); ``dirty``: tracked files differ from that commit."""
    source = source or Path(__file__).resolve().parents[2]

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(source), *args], capture_output=True, text=True, timeout=30
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {
        "version": __version__,
        "commit": commit,
        "dirty": bool(status) if status is not None else None,
    }


def provenance(config: dict, models: dict[str, dict], root=".") -> dict:
    root = Path(root)
    return {
        "project": project_commit(),
        # The config as the run used it, defaults filled (keys live in the environment, and a
        # model entry names only the variable).
        "config": config,
        "models": {mid: model_record(cfg, root) for mid, cfg in sorted(models.items())},
        "libraries": library_versions(),
        "seeds": seeds(config),
        "input_files_sha256": input_files(config, root),
        # When each enabled study's published dataset became public (oncoeval.exposure).
        "datasets_released": exposure_facts.released(oc.enabled_studies(config)),
    }


def weights_of(record: dict) -> str:
    """What the model's backend recorded of its weights (a revision, a file's hash, replayed
    files, or a note), as one cell; hashes cut to 12 hex digits."""
    parts = []
    for key, value in record.items():
        if key in ("backend", "identity", "decoding") or value in (None, "", {}, []):
            continue
        if isinstance(value, dict):
            parts.append(f"{key}: {len(value)} file(s), sha256 in the record below")
        elif key.endswith("sha256"):
            parts.append(f"{key} {str(value)[:12]}")
        else:
            parts.append(f"{key} {value}")
    return "; ".join(parts) or "–"


def models_table(record: dict, usage=()) -> pd.DataFrame:
    """One row per model: backend, revision or weights hash, decoding, tokens and cost."""
    by_model = {u["model"]: u for u in usage}
    rows = []
    for mid, m in record["models"].items():
        u = by_model.get(mid, {})
        decoding = ", ".join(f"{k}={v}" for k, v in sorted(m.get("decoding", {}).items()))
        rows.append(
            {
                "model": mid,
                "backend": m["backend"],
                "revision or weights": weights_of(m),
                "decoding": decoding or "backend defaults",
                "prompt tokens": tables.format_number(u.get("prompt_tokens")),
                "completion tokens": tables.format_number(u.get("completion_tokens")),
                "spent in this run": _usd(u.get("spent_usd")),
                "cost of answers read from the cache": _usd(u.get("cached_usd")),
            }
        )
    return pd.DataFrame(rows)


def _usd(value) -> str:
    return tables.format_usd(value)


def provenance_page(record: dict, usage=()) -> str:
    models = models_table(record, usage)
    body = (
        "<p class='caption'>What produced the results. First the models: backend, revision or "
        "weights hash, decoding settings, tokens and cost (spent by this run's calls, and the "
        "recorded cost of answers read from the cache). Then the full record: identities, "
        "chat-template hashes, library versions, seeds and the sha256 of every input file, "
        f"also in <code>{layout.PROVENANCE}</code>.</p>"
        + (tables.table_html(models, "models") if len(models) else "<p>No models.</p>")
        + "<h3>Full record</h3>"
        f"<pre>{html.escape(json.dumps(record, indent=2, sort_keys=True, default=str))}</pre>"
    )
    return tables.page("Run: models and provenance", body)


def write(config: dict, models: dict[str, dict], out_json, out_html, root=".", used=None) -> dict:
    """The record and the Run page; ``used`` (model -> studies) limits the page's token and
    cost counts to this config's models and studies."""
    from .summary import usage_rows

    record = provenance(config, models, root)
    Path(out_json).write_text(json.dumps(record, indent=2, sort_keys=True, default=str) + "\n")
    usage = usage_rows(Path(root), used if used is not None else list(models))
    Path(out_html).write_text(provenance_page(record, usage), encoding="utf-8")
    return record
