"""Building the DAG imports no model library, and a GPU model's config builds on a CPU machine.

The DAG is often built on a cluster's login node, without a GPU and without the GPU stack;
whatever needs the job's hardware (bitsandbytes on CUDA, an installed vLLM) is checked by the
backend when its job starts (tests/spine/test_hf_backend.py, test_vllm_backend.py). Here the
workflow's Python side runs in a process where importing torch, transformers or vllm fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import REPO, STUDIES, run_snakemake, workflow_env, write_config

BLOCKED = ("torch", "transformers", "vllm")

# Loaded by every Python process started with this folder on PYTHONPATH (site imports it).
BLOCKER = f"""
import sys


class _BlockModelLibraries:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {BLOCKED!r}:
            raise ImportError(f"blocked by the test: building the DAG imported {{name}}")
        return None


sys.meta_path.insert(0, _BlockModelLibraries())
"""

# The README's SLURM example (hf, 4-bit, two GPUs) and a vLLM AWQ model, on this CPU machine.
GPU_MODELS = [
    {
        "id": "llama-70b",
        "backend": "hf",
        "path": "/models/llama-3.3-70b",
        "quantization": "4bit",
        "resources": {"gpu": 2, "gpu_model": "a100", "mem_mb": 96000, "runtime": 720},
    },
    {
        "id": "qwen-awq",
        "backend": "vllm",
        "path": "/models/qwen2.5-72b-awq",
        "quantization": "awq",
        "resources": {"gpu": 1, "mem_mb": 64000},
    },
]


def blocked_env(tmp_path) -> dict:
    folder = tmp_path / "blocker"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(BLOCKER)
    return {"PYTHONPATH": os.pathsep.join([str(folder), str(REPO)])}


def test_the_blocker_blocks(tmp_path):
    """Without this, a passing test below could mean the blocker never ran."""
    proc = subprocess.run(
        [sys.executable, "-c", "import torch"],
        env=workflow_env(blocked_env(tmp_path)),
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0 and "blocked by the test" in proc.stderr


def test_config_and_backend_modules_import_without_model_libraries(tmp_path):
    code = """
import json, sys
import oncoeval.backends as b
import oncoeval.config.checks as oc

models, blocked = json.loads(sys.argv[1]), json.loads(sys.argv[2])
classes = b.backends()
config = {"models": models, "evaluate": [m["id"] for m in models],
          "adhoc": {"probe": "resources/tests/probe-requests.jsonl"}}
assert oc.config_problems(config) == [], oc.config_problems(config)
for m in models:
    oc.generate_resources(m), oc.model_signature(m), b.extra_inputs(m)
    classes[m["backend"]].provenance(m, ".")
print(sorted(m for m in sys.modules if m.split(".")[0] in blocked))
"""
    proc = subprocess.run(
        [sys.executable, "-c", code, json.dumps(GPU_MODELS), json.dumps(BLOCKED)],
        cwd=REPO,
        env=workflow_env(blocked_env(tmp_path)),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "[]"


def test_demo_dry_run_imports_no_model_library(workdir, tmp_path):
    proc = run_snakemake(workdir, "-n", env=blocked_env(tmp_path))
    assert "generate" in proc.stdout


def test_a_gpu_model_config_builds_on_a_cpu_machine(workdir, tmp_path):
    """The README's SLURM example: hf with 4-bit quantization on two GPUs, built here."""
    config = {
        "models": GPU_MODELS,
        "evaluate": [m["id"] for m in GPU_MODELS],
        "studies": {s: {"enabled": False} for s in STUDIES},
        "adhoc": {"probe": "resources/tests/probe-requests.jsonl"},
    }
    path = write_config(workdir, config)
    proc = run_snakemake(workdir, "-n", configfile=path, env=blocked_env(tmp_path))
    output = proc.stdout + proc.stderr
    assert "results/adhoc/responses/llama-70b/probe.jsonl" in output
    assert "results/adhoc/responses/qwen-awq/probe.jsonl" in output
