"""Shared test helpers: a throwaway workflow directory and a Snakemake runner."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

# Tests take their study lists from the registry (also as conftest.STUDIES), never by name.
from oncoeval.studies import STUDIES

# The toy study's own tests import `oncoeval.studies.toy`, which exists only in the workflow copy
# that tests/spine/test_fifth_study.py builds; they run there. (A conftest.py of its own would
# shadow this one: test modules import this file as `conftest`.)
collect_ignore = ["toy_study"]

REPO = Path(__file__).resolve().parents[1]
# Parts of the repository a workflow run needs; linked into each test's own directory so that
# results/, logs/, cache/ and .snakemake/ stay private to the test.
WORKFLOW_PARTS = (
    "Snakefile",
    "rules",
    "scripts",
    "config",
    "resources",
    "envs",
    "profiles",
    "report",
)
# GGUF conversions are slow and identical everywhere: share one store between tests and runs
# (the demo's model_store, cache/models). The one part of the checkout's run folders that tests
# may write (checkout_run_folders_untouched).
SHARED_MODEL_STORE = REPO / "cache" / "models"
# What `make run` writes in the checkout: no test reads or writes it (each test works in its
# own folder), so that `make run` then `make test` passes (README).
RUN_FOLDERS = ("results", "logs", "cache", ".snakemake", "benchmarks")


def run_folder_state(root: Path = REPO, exempt: Path = SHARED_MODEL_STORE) -> dict:
    """Path -> (size, mtime) of everything under ``root``'s run folders but ``exempt`` (and the
    folder holding it, which appears when the store is first made)."""
    state = {}
    for name in RUN_FOLDERS:
        top = root / name
        if not top.exists():
            continue
        for path in [top, *top.rglob("*")]:
            if path == exempt.parent or path == exempt or exempt in path.parents:
                continue
            info = path.lstat()
            state[path.relative_to(root).as_posix()] = (info.st_size, info.st_mtime_ns)
    return state


def run_folder_changes(before: dict, after: dict) -> list[str]:
    """What changed between two ``run_folder_state`` snapshots, one line per path."""
    lines = [f"added {p}" for p in sorted(after.keys() - before.keys())]
    lines += [f"removed {p}" for p in sorted(before.keys() - after.keys())]
    lines += [f"changed {p}" for p in sorted(before.keys() & after.keys()) if before[p] != after[p]]
    return lines


@pytest.fixture(scope="session", autouse=True)
def checkout_run_folders_untouched():
    """Fails the session when a test changed the checkout's results/, logs/, cache/ (but the
    shared model store), .snakemake/ or benchmarks/. CI fills them first (.ci/fake_run_tree.py)
    so that a test that reads them fails too."""
    before = run_folder_state()
    yield
    changes = run_folder_changes(before, run_folder_state())
    if changes:
        pytest.fail(
            f"tests changed the checkout's run folders ({len(changes)} paths); a test must work "
            "in its own folder (tmp_path, conftest.workdir):\n  " + "\n  ".join(changes[:30]),
            pytrace=False,
        )


def workflow_env(extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        ONCOEVAL_MODEL_STORE=str(SHARED_MODEL_STORE),
    )
    env.update(extra or {})
    return env


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A fresh directory that looks like the repository to Snakemake."""
    return link_workflow(tmp_path)


@pytest.fixture
def key(request, monkeypatch) -> str:
    """A fresh API key for one test, set in the environment variable its module names in
    ``KEY_ENV`` (the variable the module's model configs give as ``api_key_env``)."""
    value = "sk-test-" + secrets.token_hex(16)
    monkeypatch.setenv(request.module.KEY_ENV, value)
    return value


@pytest.fixture
def server(request, key):
    """tests/fake_openai_server.py on 127.0.0.1, accepting only ``key``; each answer takes the
    module's ``SERVER_LATENCY`` seconds (0 if it sets none)."""
    from fake_openai_server import FakeOpenAIServer

    latency = getattr(request.module, "SERVER_LATENCY", 0.0)
    with FakeOpenAIServer(latency=latency, api_key=key) as srv:
        yield srv


def link_workflow(path: Path) -> Path:
    """Link the workflow's parts into ``path`` (made if missing) so that Snakemake runs there."""
    path.mkdir(parents=True, exist_ok=True)
    for part in WORKFLOW_PARTS:
        if (REPO / part).exists():
            (path / part).symlink_to(REPO / part)
    return path


def other_studies_off(*kept: str) -> dict:
    """``studies`` blocks that switch off every registered study but ``kept``."""
    return {s: {"enabled": False} for s in STUDIES if s not in kept}


def layered(base: dict, over: dict) -> dict:
    """``over`` merged onto ``base`` the way Snakemake layers config files (mappings merge
    recursively, anything else is replaced)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = layered(out[key], value)
        else:
            out[key] = value
    return out


def write_config(
    workdir: Path, config: dict, name: str = "test-config.yaml", demo: bool = True
) -> Path:
    """Write a test config built on the demo, as ``--configfile config/config.yaml test.yaml``
    would layer it (a --configfile alone starts from the schema defaults, not the demo).

    A config without a ``studies`` key switches every study off: the demo enables them, with
    judges and model ids that a test's own ``models`` list does not define. ``demo=False``
    writes the config as it is, as a user's own.
    """
    if "studies" not in config:
        config = {**config, "studies": {s: {"enabled": False} for s in STUDIES}}
    if demo:
        config = layered(yaml.safe_load((REPO / "config" / "config.yaml").read_text()), config)
    path = workdir / name
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def run_snakemake(
    workdir: Path,
    *args: str,
    configfile: Path | None = None,
    env: dict | None = None,
    check: bool = True,
    timeout: float = 1200,
) -> subprocess.CompletedProcess:
    """Run ``snakemake`` in ``workdir`` (no workflow profile, two cores unless told otherwise)."""
    cmd = [sys.executable, "-m", "snakemake", "--workflow-profile", "none", "--cores", "2"]
    if configfile is not None:
        # The `=` form takes exactly one value: a bare --configfile would swallow any targets
        # that follow it as further config files.
        cmd.append(f"--configfile={configfile}")
    cmd += list(args)
    proc = subprocess.run(
        cmd,
        cwd=workdir,
        env=workflow_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"snakemake {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
        )
    return proc


def dry_run_jobs(
    workdir: Path, *args: str, configfile: Path | None = None, env: dict | None = None
) -> dict[str, int]:
    """Rule name -> job count of a dry run (from Snakemake's job stats table)."""
    proc = run_snakemake(workdir, "-n", "--quiet", "rules", *args, configfile=configfile, env=env)
    counts: dict[str, int] = {}
    in_table = False
    for line in (proc.stdout + proc.stderr).splitlines():
        parts = line.split()
        if parts[:2] == ["job", "count"]:
            in_table = True
            continue
        if in_table:
            if len(parts) == 2 and parts[1].isdigit():
                if parts[0] != "total":
                    counts[parts[0]] = int(parts[1])
            elif parts and not set(parts[0]) <= {"-"}:
                in_table = False
    return counts


def without_report(jobs: dict[str, int]) -> dict[str, int]:
    """A dry run's job counts less the report's rules (report_*), which rebuild the pages of any
    changed table and of a new model; tests/report checks those."""
    return {rule: n for rule, n in jobs.items() if not rule.startswith("report_")}


def generate_rows(tmp_path: Path, requests: Path, cfg: dict, requestset: str, **kw) -> list[dict]:
    """``run_generate`` of ad-hoc request set ``requestset`` into ``tmp_path``'s shared cache,
    as a `generate` job would; the rows of its responses file."""
    from oncoeval.workflow.generate import run_generate

    out = tmp_path / f"responses-{requestset}.jsonl"
    run_generate(requests, out, cfg, tmp_path / "cache", "adhoc", requestset, progress=False, **kw)
    return [json.loads(line) for line in out.open()]


# vLLM needs CUDA; the stand-in package in tests/vllm_standin plays its engine so that the
# backend's own code (prompt ids, per-request settings, chunking, failures) runs here.
VLLM_STANDIN = REPO / "tests" / "vllm_standin"


@pytest.fixture
def standin_vllm(monkeypatch, tmp_path) -> Path:
    """``import vllm`` gets the stand-in engine for one test; the log it writes each call to."""
    log = tmp_path / "engine.jsonl"
    monkeypatch.setenv("STANDIN_VLLM_LOG", str(log))
    monkeypatch.syspath_prepend(str(VLLM_STANDIN))
    for name in ("vllm", "vllm.sampling_params"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    log.touch()
    yield log
    for name in ("vllm", "vllm.sampling_params"):
        sys.modules.pop(name, None)
