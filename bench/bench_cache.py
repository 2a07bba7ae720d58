"""Cache and reruns (issue #8, item 3), through real `snakemake` calls.

1. A 10-model config (10 `openai` models against the local server, one ad-hoc set of 50
   requests): the first run, a rerun with unchanged requests (model calls must be 0; wall time of
   the whole `snakemake` call, DAG included), and a rerun after deleting results/ (every answer
   from the cache, 0 calls).
2. Resumption: one model, 200 requests; the run is killed (SIGKILL to snakemake's process group)
   once the server has answered half; the rerun's calls must equal what the cache lacks, i.e.
   the remaining half (plus the few requests in flight at the kill, which were never received).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from bench._fake_api import REPO, ServerProcess, make_workdir, write_requests
from oncoeval.config.checks import STUDIES
from oncoeval.core import layout

KEY_ENV = "ONCOEVAL_BENCH_KEY"
N_MODELS = 10
N_REQUESTS = 50
N_RESUME = 200


def _env() -> dict:
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        ONCOEVAL_MODEL_STORE=str(REPO / "cache" / "models"),
    )
    env.setdefault(KEY_ENV, "sk-bench-not-a-secret")
    return env


def _cmd(config: Path) -> list[str]:
    return [sys.executable, "-m", "snakemake", "--workflow-profile", "none", "--cores", "2"] + [
        "--configfile",
        str(config),
    ]


def _snakemake(workdir: Path, config: Path) -> float:
    started = time.perf_counter()
    proc = subprocess.run(_cmd(config), cwd=workdir, env=_env(), capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"snakemake failed:\n{proc.stderr[-3000:]}")
    return round(time.perf_counter() - started, 2)


def _config(workdir: Path, url: str, n_models: int, concurrency: int) -> Path:
    models = [
        {
            "id": f"api{i:02d}",
            "backend": "openai",
            "model": f"bench-model-{i}",
            "base_url": url,
            "api_key_env": KEY_ENV,
            "concurrency": concurrency,
        }
        for i in range(n_models)
    ]
    config = {
        "models": models,
        "evaluate": [m["id"] for m in models],
        "adhoc": {"probe": "requests.jsonl"},
        # The ad-hoc set only: the default config's studies name judges this config lacks.
        "studies": {study: {"enabled": False} for study in STUDIES},
    }
    path = workdir / "bench-config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _cached_lines(workdir: Path) -> int:
    n = 0
    for file in (workdir / "cache" / "responses").rglob("*.jsonl"):
        for line in file.open():
            try:
                json.loads(line)
                n += 1
            except json.JSONDecodeError:
                pass
    return n


def _startup_floor() -> float:
    """Seconds to start Python and import Snakemake's API, which every `snakemake` call pays
    (its executor plugins are imported then; the SLURM one asks `scontrol`, which waits ~9 s
    for a controller where slurm.conf names one that is not running)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import snakemake.api"], env=_env(), check=True)
    return round(time.perf_counter() - started, 2)


def _reruns(root: Path) -> dict:
    workdir = make_workdir(root / "ten-models")
    write_requests(workdir / "requests.jsonl", N_REQUESTS)
    with ServerProcess(latency=0.02) as server:
        config = _config(workdir, server.url, N_MODELS, concurrency=8)
        first = _snakemake(workdir, config)
        first_calls = server.stats()["total_calls"]
        server.reset()
        unchanged = _snakemake(workdir, config)
        unchanged_calls = server.stats()["total_calls"]
        shutil.rmtree(workdir / layout.RESULTS)
        server.reset()
        from_cache = _snakemake(workdir, config)
        cache_calls = server.stats()["total_calls"]
    rows = [
        json.loads(line)
        for f in (workdir / layout.ResultPaths("adhoc").responses()).rglob("*.jsonl")
        for line in f.open()
    ]
    return {
        "models": N_MODELS,
        "requests_per_model": N_REQUESTS,
        "first_run_s": first,
        "first_run_calls": first_calls,
        "unchanged_rerun_s": unchanged,
        "unchanged_rerun_calls": unchanged_calls,
        "results_deleted_rerun_s": from_cache,
        "results_deleted_rerun_calls": cache_calls,
        "results_deleted_rows_cached": sum(r["cached"] for r in rows),
        "results_deleted_rows": len(rows),
    }


def _resume(root: Path) -> dict:
    workdir = make_workdir(root / "resume")
    write_requests(workdir / "requests.jsonl", N_RESUME, prefix="resume")
    with ServerProcess(latency=0.05) as server:
        config = _config(workdir, server.url, 1, concurrency=4)
        proc = subprocess.Popen(
            _cmd(config),
            cwd=workdir,
            env=_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        while server.stats()["total_answered"] < N_RESUME // 2:
            if proc.poll() is not None:
                raise RuntimeError("the run ended before the kill")
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        time.sleep(0.3)
        killed = server.stats()
        cached = _cached_lines(workdir)
        server.reset()
        unlock = subprocess.run(_cmd(config) + ["--unlock"], cwd=workdir, env=_env())
        assert unlock.returncode == 0
        rerun_s = _snakemake(workdir, config)
        rerun = server.stats()
    twice = sum(1 for p, n in rerun["answered"].items() if killed["answered"].get(p))
    return {
        "requests": N_RESUME,
        "answered_before_kill": killed["total_answered"],
        "cached_at_kill": cached,
        "rerun_calls": rerun["total_calls"],
        "expected_rerun_calls": N_RESUME - cached,
        "answered_before_kill_and_asked_again": twice,
        "in_flight_lost_at_kill": killed["total_answered"] - cached,
        "rerun_s": rerun_s,
    }


def run(out_dir: Path) -> dict:
    root = Path(tempfile.mkdtemp(prefix="oncoeval-bench-cache-"))
    try:
        floor = _startup_floor()
        reruns = _reruns(root)
        resume = _resume(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    r, s = reruns, resume
    summary = [
        f"{r['models']} `openai` models x {r['requests_per_model']} requests (local server), "
        "wall time of the whole `snakemake` call:",
        "",
        "| run | model calls | wall (s) | vs first run |",
        "|---|---|---|---|",
        f"| first run | {r['first_run_calls']} | {r['first_run_s']} | 1.00x |",
        f"| rerun, unchanged requests | {r['unchanged_rerun_calls']} | {r['unchanged_rerun_s']} | "
        f"{r['unchanged_rerun_s'] / r['first_run_s']:.2f}x |",
        f"| rerun after deleting results/ (all from cache) | {r['results_deleted_rerun_calls']} | "
        f"{r['results_deleted_rerun_s']} | {r['results_deleted_rerun_s'] / r['first_run_s']:.2f}x |",
        "",
        f"Resumption: {s['requests']} requests, killed after {s['answered_before_kill']} answers "
        f"({s['cached_at_kill']} in the cache); the rerun made {s['rerun_calls']} calls "
        f"(= {s['requests']} - cached: {s['expected_rerun_calls']}); "
        f"{s['answered_before_kill_and_asked_again']} requests were answered by the server before "
        f"the kill and asked again (in flight when the job died: {s['in_flight_lost_at_kill']}).",
        "",
        f"Startup floor on this machine: `import snakemake.api` alone takes {floor} s (paid by "
        "every `snakemake` call and every job it spawns).",
    ]
    ok = (
        r["unchanged_rerun_calls"] == 0
        and r["results_deleted_rerun_calls"] == 0
        and s["rerun_calls"] == s["expected_rerun_calls"]
    )
    return {
        "reruns": reruns,
        "resume": resume,
        "snakemake_import_s": floor,
        "targets_met": ok,
        "summary": summary,
    }
