"""The workflow on a real single-node SLURM cluster (Debian's SLURM 22.05, fake GPU gres).

Opt-in (it installs packages and starts daemons): `make test-slurm`, which CI runs after the
other tests. The fixture reuses a cluster that already answers `sinfo`; otherwise it starts one
with .ci/slurm/start_local_slurm.sh and, at the end, stops exactly the daemons that script
recorded (never by name). Every wait is bounded: a command still running after its limit is
killed with SIGKILL, with everything it started.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from tests.conftest import REPO, run_snakemake, workflow_env, write_config

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

SCRIPTS = REPO / ".ci" / "slurm"
START_TIMEOUT_S = 600  # apt-get install included
RUN_TIMEOUT_S = 900


def sh(cmd: list[str], timeout_s: float, **kw) -> subprocess.CompletedProcess:
    """Run a command; after ``timeout_s`` kill it and everything it started (SIGKILL).

    Not `timeout -s KILL`: that puts the command into a process group of its own, where the
    CI's outer timeout can no longer reach it.
    """
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        for child in psutil.Process(proc.pid).children(recursive=True):
            child.kill()
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(
            f"{' '.join(cmd[:4])} ... still running after {timeout_s} s; killed\n{err[-3000:]}"
        )
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def cluster_answers() -> bool:
    if not shutil.which("sinfo"):
        return False
    proc = sh(["sinfo", "-h", "-N", "-o", "%T"], 20)
    return proc.returncode == 0 and any(
        s in proc.stdout for s in ("idle", "mixed", "allocated", "completing")
    )


@pytest.fixture(scope="module")
def slurm_cluster(tmp_path_factory):
    if os.environ.get("ONCOEVAL_SLURM_TESTS") != "1":
        pytest.skip("SLURM integration test is opt-in: run `make test-slurm` (CI does)")
    if cluster_answers():
        yield "reused"  # someone else's cluster: never stop it
        return
    if os.geteuid() != 0:
        pytest.skip("SLURM test: starting a local cluster needs root")
    if not (shutil.which("slurmctld") or shutil.which("apt-get")):
        pytest.skip("SLURM test: no SLURM packages and no apt-get to install them")
    # .ci/run names the state folder, so that it can stop these daemons even if pytest is killed.
    base = os.environ.get("LOCAL_SLURM_BASE") or str(tmp_path_factory.mktemp("slurm-state"))
    env = {**os.environ, "LOCAL_SLURM_BASE": str(base), "LOCAL_SLURM_GPUS": "1"}
    start = sh([str(SCRIPTS / "start_local_slurm.sh")], START_TIMEOUT_S, env=env)
    try:
        if start.returncode != 0:
            pytest.fail(f"could not start SLURM:\n{start.stdout[-3000:]}\n{start.stderr[-3000:]}")
        yield "started"
    finally:
        # Stop our daemons and remove the packages the start script installed (if it did):
        # the SLURM client without a controller slows every later `snakemake` call by ~10 s.
        env["LOCAL_SLURM_REMOVE_PACKAGES"] = "1"
        stop = sh([str(SCRIPTS / "stop_local_slurm.sh")], 400, env=env)
        print(stop.stdout)


def small_config(tmp_path: Path) -> dict:
    """An ad-hoc request set answered by SmolLM2 (a GPU-tagged job) and by a replay model."""
    questions = [
        "Name one common side effect of radiotherapy.",
        "What does a CT scan show?",
        "Say hello to a patient.",
    ]
    requests = tmp_path / "requests.jsonl"
    requests.write_text(
        "".join(
            json.dumps(
                {
                    "request_id": f"q{i}",
                    "messages": [{"role": "user", "content": q}],
                    "params": {"max_new_tokens": 12},
                }
            )
            + "\n"
            for i, q in enumerate(questions)
        )
    )
    replay = tmp_path / "replay"
    replay.mkdir()
    # One answer missing on purpose: it must come back as an error row on both executors.
    (replay / "try.jsonl").write_text(
        "".join(json.dumps({"request_id": f"q{i}", "text": f"stored {i}"}) + "\n" for i in (0, 1))
    )
    return {
        "models": [
            {
                "id": "smollm2",
                "backend": "hf",
                "path": "embedded:smollm2-135m-instruct",
                "dtype": "float32",
                "batch_size": 4,
                "threads": 1,
                "resources": {"gpu": 1, "mem_mb": 3000, "runtime": 20},
            },
            {"id": "rep", "backend": "replay", "path": str(replay)},
        ],
        "evaluate": ["smollm2", "rep"],
        "adhoc": {"try": str(requests)},
    }


def comparable(path: Path) -> list[dict]:
    keep = ("request_id", "model", "text", "finish_reason", "completion_tokens", "error")
    return [{k: row.get(k) for k in keep} for row in map(json.loads, path.read_text().splitlines())]


def slurm_jobs(workdir: Path) -> dict[str, str]:
    """Rule/wildcards folder -> SLURM job id, from the plugin's kept per-job logs."""
    logs = workdir / ".snakemake" / "slurm_logs"
    return {log.parent.name: log.stem for log in logs.rglob("*.log") if log.stem.isdigit()}


def scontrol(job_id: str) -> dict[str, str]:
    proc = sh(["scontrol", "show", "job", job_id], 30)
    assert proc.returncode == 0, proc.stderr
    return dict(re.findall(r"(\w+)=(\S*)", proc.stdout))


def test_workflow_runs_through_the_slurm_executor_and_matches_a_local_run(
    slurm_cluster, tmp_path, workdir
):
    config = small_config(tmp_path)
    cfg = write_config(workdir, config)
    cmd = [
        sys.executable, "-m", "snakemake",
        "--workflow-profile", "profiles/slurm-noaccounting",
        "--configfile", str(cfg),
    ]  # fmt: skip
    proc = sh(cmd, RUN_TIMEOUT_S, cwd=workdir, env=workflow_env())
    assert proc.returncode == 0, f"SLURM run failed ({proc.returncode}):\n{proc.stderr[-6000:]}"

    # Every non-local job ran as a SLURM job: one generate job per model and the one-time GGUF
    # conversion of the embedded model (it loads the model, so it is not a local rule), no more.
    jobs = slurm_jobs(workdir)
    conversions = {f for f in jobs if f.startswith("SmolLM2-135M-Instruct")}
    assert len(conversions) == 1, jobs
    assert set(jobs) - conversions == {"adhoc_smollm2_try", "adhoc_rep_try"}, jobs
    for folder, job_id in jobs.items():
        assert f"submitted with SLURM jobid {job_id}" in proc.stderr
        info = scontrol(job_id)
        assert info["JobState"] == "COMPLETED", (folder, info)
        assert info["Partition"] == "cpu"
        gpu_request = info.get("TresPerJob", "")
        if folder == "adhoc_smollm2_try":  # the GPU-tagged job asked SLURM for a GPU
            assert gpu_request == "gres:gpu:1", info
            assert info["MinMemoryNode"] == "3000M"
        else:
            assert "gpu" not in gpu_request, info
    # The local rules stayed local.
    assert "localrule adhoc_requests" in proc.stderr

    # The same config run locally gives the same responses.
    local = tmp_path / "local"
    local.mkdir()
    for part in workdir.iterdir():
        if part.is_symlink():
            (local / part.name).symlink_to(part.resolve())
    local_cfg = write_config(local, config)
    run_snakemake(local, configfile=local_cfg, timeout=RUN_TIMEOUT_S)
    for model in ("smollm2", "rep"):
        rel = Path("results/adhoc/responses") / model / "try.jsonl"
        on_slurm, here = comparable(workdir / rel), comparable(local / rel)
        assert on_slurm == here, model
        assert len(on_slurm) == 3
    rep = comparable(workdir / "results/adhoc/responses/rep/try.jsonl")
    assert [r["error"] is not None for r in rep] == [False, False, True]
    assert all(r["text"] for r in comparable(workdir / "results/adhoc/responses/smollm2/try.jsonl"))
