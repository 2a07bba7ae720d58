"""Config helpers used when the DAG is built (imported by rules/common.smk).

The JSON Schema (config/config.schema.yaml) checks shapes and fills defaults; this module checks
what a schema cannot: references between keys, PHI routing, API key variables, and hardware.
Every message names the key it is about. Nothing here imports torch unless a used model asks
for quantization.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .backends import get_backend
from .cache import canonical_json
from .errors import ConfigError

STUDIES = ("side_effects", "cancer_myth", "coral", "guidelines")

# phi_safe when the config does not say: local and replayed models keep data on the machine.
PHI_SAFE_DEFAULT = {"hf": True, "replay": True, "vllm": True, "openai": False}


def models_by_id(config: dict) -> dict[str, dict]:
    models: dict[str, dict] = {}
    for i, model in enumerate(config.get("models") or []):
        if model["id"] in models:
            raise ConfigError(f"models[{i}].id: duplicate model id {model['id']!r}")
        model = dict(model)
        if model.get("phi_safe") is None:
            model["phi_safe"] = PHI_SAFE_DEFAULT.get(model["backend"], False)
        models[model["id"]] = model
    return models


def enabled_studies(config: dict) -> list[str]:
    studies = config.get("studies") or {}
    return [s for s in STUDIES if (studies.get(s) or {}).get("enabled", False)]


def study_evaluated_models(config: dict, study: str) -> list[str]:
    """The models evaluated by a study: its own ``evaluate`` list, else the global one."""
    block = (config.get("studies") or {}).get(study) or {}
    return list(block.get("evaluate") or config.get("evaluate") or [])


def study_judges(config: dict, study: str) -> dict[str, str]:
    """Judge roles of a study (``judges: {role: model_id}``); roles set to null are unused."""
    block = (config.get("studies") or {}).get(study) or {}
    return {role: mid for role, mid in (block.get("judges") or {}).items() if mid}


def used_models(config: dict) -> dict[str, set[str]]:
    """Model id -> the studies (and ad-hoc sets) that send it data."""
    used: dict[str, set[str]] = {}
    for study in enabled_studies(config):
        for mid in study_evaluated_models(config, study) + list(
            study_judges(config, study).values()
        ):
            used.setdefault(mid, set()).add(study)
    for name in config.get("adhoc") or {}:
        for mid in config.get("evaluate") or []:
            used.setdefault(mid, set()).add(f"adhoc:{name}")
    return used


def check_config(config: dict, env: dict | None = None, cuda_available=None) -> None:
    """Raise ConfigError for the first problem a schema cannot see."""
    env = os.environ if env is None else env
    models = models_by_id(config)
    for mid in config.get("evaluate") or []:
        if mid not in models:
            raise ConfigError(f"evaluate: unknown model id {mid!r}; defined: {sorted(models)}")
    for study in enabled_studies(config):
        for mid in study_evaluated_models(config, study):
            if mid not in models:
                raise ConfigError(f"studies.{study}.evaluate: unknown model id {mid!r}")
        for role, mid in study_judges(config, study).items():
            if mid not in models:
                raise ConfigError(f"studies.{study}.judges.{role}: unknown model id {mid!r}")
        block = config["studies"][study]
        if block.get("contains_phi"):
            roles = {m: "evaluated" for m in study_evaluated_models(config, study)}
            roles.update({m: f"judge {r}" for r, m in study_judges(config, study).items()})
            for mid, role in roles.items():
                if not models[mid]["phi_safe"]:
                    raise ConfigError(
                        f"studies.{study}.contains_phi is true, but model {mid!r} ({role}) is not "
                        f"phi_safe: PHI may not be sent to it. Set models[{mid}].phi_safe: true only "
                        "if your data agreement allows this endpoint."
                    )
    for mid in sorted(used_models(config)):
        cfg = models[mid]
        problems = get_backend(cfg["backend"]).config_problems(cfg, env=env)
        if problems:
            raise ConfigError(problems[0])
        if cfg.get("quantization", "none") != "none":
            if cuda_available is None:
                cuda_available = _cuda_available()
            if not cuda_available:
                raise ConfigError(
                    f"models[{mid}].quantization: {cfg['quantization']} needs bitsandbytes on a "
                    "CUDA GPU, and this machine has none (bitsandbytes would silently quantize on "
                    "the CPU and change the outputs). Use quantization: none here, or run this "
                    "model's jobs on a GPU node."
                )


def _cuda_available() -> bool:
    import torch  # only imported when a used model asks for quantization

    return bool(torch.cuda.is_available())


def model_signature(cfg: dict, study: str | None = None, requestset: str | None = None) -> str:
    """What the model's outputs depend on, as one string for the `generate` rule's params.

    Changing an operational setting (batch size, concurrency, resources, price, phi_safe) does not
    change it, so such edits rerun nothing. Given a job's study and request set, it also holds a
    digest of the stored answers a backend serves for that job (replay), so editing them reruns
    the jobs that read them, and only those.
    """
    backend = get_backend(cfg["backend"])
    signature = {"backend": cfg["backend"], **backend.identity(cfg)}
    if study is not None:
        digest = backend.answers_digest(cfg, study, requestset)
        if digest is not None:
            signature["answers_digest"] = digest
    return canonical_json(signature)


def file_digest(path: str | os.PathLike, length: int = 16) -> str:
    """Short content hash of a file, for params that must change when a template changes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:length]


def generate_resources(cfg: dict) -> dict:
    """Resources the `generate` job for this model asks the scheduler for."""
    if cfg["backend"] in ("hf", "vllm"):
        res = dict(cfg.get("resources") or {})
        out = {
            "gpu": int(res.get("gpu", 0)),
            "mem_mb": int(res.get("mem_mb", 4000)),
            "runtime": int(res.get("runtime", 120)),
        }
        for key in ("constraint", "slurm_partition", "slurm_extra"):
            if res.get(key):
                out[key] = res[key]
        # The SLURM plugin turns gpu_model into --gpus=MODEL:N; without a GPU count it would
        # ask for MODEL:0, so a model only counts when GPUs are asked for.
        if res.get("gpu_model") and out["gpu"] > 0:
            out["gpu_model"] = res["gpu_model"]
        return out
    if cfg["backend"] == "openai":
        return {
            "api_calls": 1,
            "mem_mb": 1000,
            "runtime": int((cfg.get("resources") or {}).get("runtime", 240)),
        }
    return {"mem_mb": 1000, "runtime": 30}


def sort_mappings_in_place(config: dict) -> None:
    """Order every mapping of ``config`` by key, recursively (lists keep their order).

    Snakemake compares ``params`` by their text; a dict passed as a param would otherwise rerun
    its job when the YAML lists the same keys in another order.
    """

    def ordered(value):
        if isinstance(value, dict):
            return {k: ordered(value[k]) for k in sorted(value, key=str)}
        if isinstance(value, list):
            return [ordered(v) for v in value]
        return value

    items = ordered(dict(config))
    config.clear()
    config.update(items)


def put_first_on_pythonpath(folder: str, env: dict | None = None) -> None:
    """Make ``folder`` the first PYTHONPATH entry of this process and every job it starts."""
    env = os.environ if env is None else env
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != folder]
    env["PYTHONPATH"] = os.pathsep.join([folder, *parts])


def generate_threads(cfg: dict) -> int:
    if cfg["backend"] in ("hf", "vllm"):
        return int(cfg.get("threads") or 2)
    return 1
