"""Conda env files (for `--sdm conda`): valid YAML, pinned like requirements.lock, used by rules.

They cannot be built here (no conda channel is reachable), so this checks what can go wrong
without building them: syntax, pins, and that every rule names one that exists.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

ENV_FILES = sorted((REPO / "envs").glob("*.yaml"))


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_pins() -> dict[str, str]:
    pins = {}
    for lock in ("requirements.lock", "requirements-embedded.txt"):
        for line in (REPO / lock).read_text().splitlines():
            line = line.split("#")[0].strip()
            if "==" in line:
                name, version = line.split("==", 1)
                pins[normalise(name)] = version.strip()
    return pins


def pip_requirements(env: dict) -> list[str]:
    reqs = []
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            reqs += [r for r in dep.get("pip", []) if not r.startswith("-")]
    return reqs


@pytest.mark.parametrize("path", ENV_FILES, ids=lambda p: p.name)
def test_env_file_is_valid_and_pinned_like_the_lock_file(path):
    env = yaml.safe_load(path.read_text())
    assert set(env) <= {"name", "channels", "dependencies"}
    assert "conda-forge" in env["channels"]
    conda_deps = [d for d in env["dependencies"] if isinstance(d, str)]
    assert "python=3.11" in conda_deps
    pins = locked_pins()
    reqs = pip_requirements(env)
    assert reqs, f"{path.name} installs nothing"
    for req in reqs:
        assert re.fullmatch(r"[A-Za-z0-9_.-]+==[0-9][A-Za-z0-9.+]*", req), f"unpinned: {req}"
        name, version = req.split("==")
        if normalise(name) in pins:
            assert version == pins[normalise(name)], (
                f"{path.name}: {req} but the lock has {pins[normalise(name)]}"
            )
    # Nothing local or editable: Snakemake copies env files into .snakemake/conda, where a
    # relative path would point elsewhere.
    assert not any(
        r.startswith("-e")
        for dep in env["dependencies"]
        if isinstance(dep, dict)
        for r in dep.get("pip", [])
    )


def test_gpu_inference_env_has_cuda_torch_and_bitsandbytes():
    env = yaml.safe_load((REPO / "envs" / "inference.yaml").read_text())
    pip_lines = [r for d in env["dependencies"] if isinstance(d, dict) for r in d["pip"]]
    names = {normalise(r.split("==")[0]) for r in pip_lines if "==" in r}
    assert {"torch", "bitsandbytes", "transformers", "accelerate", "openai"} <= names
    # PyPI's Linux torch wheel is the CUDA build; a CPU-only index would break bitsandbytes.
    assert not any("whl/cpu" in r for r in pip_lines)


def rule_blocks(smk: Path):
    """(rule name, its text) for every rule of a .smk file."""
    text = smk.read_text()
    starts = [
        (m.group(1), m.start()) for m in re.finditer(r"^(?:rule|checkpoint) (\w+):", text, re.M)
    ]
    for i, (name, start) in enumerate(starts):
        end = starts[i + 1][1] if i + 1 < len(starts) else len(text)
        block = text[start:end]
        first_line_end = block.index("\n") + 1
        nxt = re.search(r"^\S", block[first_line_end:], re.M)  # ends at the next top-level line
        yield name, block[: first_line_end + nxt.start()] if nxt else block


def test_every_rule_names_an_existing_conda_env():
    checked = 0
    for smk in sorted((REPO / "rules").glob("*.smk")):
        for name, block in rule_blocks(smk):
            m = re.search(r"^\s+conda:\s*\n\s+\"([^\"]+)\"", block, re.M)
            assert m, f"{smk.name}: rule {name} has no conda: directive"
            env = (smk.parent / m.group(1)).resolve()
            assert env.is_file(), (
                f"{smk.name}: rule {name} names {m.group(1)}, which does not exist"
            )
            assert env.parent == REPO / "envs"
            checked += 1
    assert checked >= 2  # at least generate and adhoc_requests
