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
import time
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


# The SLURM log folder of the submission that runs one local model's wave (oncoeval.workflow.waves).
GROUP = "group_engine-{model}-w{wave}_generate"


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
    # A local model's generate jobs go as one group per wave (here one set, one wave).
    assert set(jobs) - conversions == {GROUP.format(model="smollm2", wave=1), "adhoc_rep_try"}, jobs
    for folder, job_id in jobs.items():
        assert f"submitted with SLURM jobid {job_id}" in proc.stderr
        info = scontrol(job_id)
        assert info["JobState"] == "COMPLETED", (folder, info)
        assert info["Partition"] == "cpu"
        gpu_request = info.get("TresPerJob", "")
        if folder.startswith("group_engine-smollm2"):  # the GPU-tagged job asked for a GPU
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


def questions_file(path: Path, n: int, tokens: int) -> Path:
    path.write_text(
        "".join(
            json.dumps(
                {
                    "request_id": f"q{i}",
                    "messages": [{"role": "user", "content": f"Give {path.stem} fact {i} on CT."}],
                    "params": {"max_new_tokens": tokens},
                }
            )
            + "\n"
            for i in range(n)
        )
    )
    return path


def cached_keys(cache: Path) -> set[str]:
    keys = set()
    for line in cache.read_text().splitlines():
        try:
            keys.add(json.loads(line)["key"])
        except json.JSONDecodeError:  # torn by the cancel: asked again
            pass
    return keys


def loads_and_counts(workdir: Path, requestset: str) -> tuple[int, list[tuple[int, int]]]:
    """Engine loads and the (from cache, to generate) lines in a set's generate log."""
    text = (workdir / "logs/adhoc/generate/smollm2" / f"{requestset}.log").read_text()
    counts = re.findall(r"(\d+) from cache, (\d+) to generate", text)
    return text.count("loaded smollm2 in"), [(int(a), int(b)) for a, b in counts]


def test_a_local_model_is_one_gpu_submission_per_wave_and_a_cancelled_one_loses_no_answer(
    slurm_cluster, tmp_path, workdir
):
    sets = {name: str(questions_file(tmp_path / f"{name}.jsonl", 3, 6)) for name in "abc"}
    config = small_config(tmp_path)
    config["models"] = config["models"][:1]
    config.update(evaluate=["smollm2"], adhoc=sets)
    cmd = [
        sys.executable, "-m", "snakemake",
        "--workflow-profile", "profiles/slurm-noaccounting",
        "--configfile", str(write_config(workdir, config)),
    ]  # fmt: skip
    proc = sh(cmd, RUN_TIMEOUT_S, cwd=workdir, env=workflow_env())
    assert proc.returncode == 0, f"SLURM run failed ({proc.returncode}):\n{proc.stderr[-6000:]}"
    plan = json.loads((workdir / ".snakemake/oncoeval-generate-plan.last.json").read_text())
    assert plan["models"]["smollm2"]["waves"] == 1
    # Three request sets, one wave: one GPU submission, with the model's resources (not three).
    jobs = {f: j for f, j in slurm_jobs(workdir).items() if not f.startswith("SmolLM2")}
    assert list(jobs) == [GROUP.format(model="smollm2", wave=1)], jobs
    info = scontrol(jobs[GROUP.format(model="smollm2", wave=1)])
    assert info["JobState"] == "COMPLETED", info
    assert info.get("TresPerJob") == "gres:gpu:1", info
    assert info["MinMemoryNode"] == "3000M", info
    assert info["TimeLimit"] == "00:20:00", info
    # One engine load answered the three sets; each set kept its own responses file.
    loaded = [loads_and_counts(workdir, name)[0] for name in "abc"]
    assert sum(loaded) == 1, loaded
    for name in "abc":
        rows = comparable(workdir / "results/adhoc/responses/smollm2" / f"{name}.jsonl")
        assert len(rows) == 3 and all(r["text"] and r["error"] is None for r in rows), name

    # A submission cancelled mid-way (preempted, or out of walltime) keeps every answer it made;
    # the rerun asks only the rest.
    n = 120
    config["adhoc"] = {"long": str(questions_file(tmp_path / "long.jsonl", n, 8))}
    cmd[-1] = str(write_config(workdir, config))
    cache = workdir / "cache/responses/smollm2/adhoc--long.jsonl"
    run = subprocess.Popen(cmd, cwd=workdir, env=workflow_env(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while not (cache.exists() and len(cache.read_text().splitlines()) >= 5):
            assert run.poll() is None, run.communicate()[1][-6000:]
            assert time.monotonic() < deadline, "no answer cached in time"
            time.sleep(0.5)
        group = GROUP.format(model="smollm2", wave=1)
        logs = workdir / ".snakemake" / "slurm_logs" / group
        job_id = [log.stem for log in logs.glob("*.log") if log.stem not in jobs.values()]
        assert len(job_id) == 1, sorted(logs.glob("*.log"))
        assert sh(["scancel", job_id[0]], 30).returncode == 0
        _, err = run.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode != 0, err[-3000:]
    kept = len(cached_keys(cache))
    assert 5 <= kept < n, kept
    assert not (workdir / "results/adhoc/responses/smollm2/long.jsonl").exists()
    proc = sh(cmd, RUN_TIMEOUT_S, cwd=workdir, env=workflow_env())
    assert proc.returncode == 0, f"rerun failed ({proc.returncode}):\n{proc.stderr[-6000:]}"
    _, counts = loads_and_counts(workdir, "long")
    assert counts[-1] == (kept, n - kept), counts
    # The rerun's job, ready as the run starts, still went as its wave's submission.
    resubmitted = [
        log.stem for log in logs.glob("*.log") if log.stem not in {*jobs.values(), *job_id}
    ]
    assert len(resubmitted) == 1, sorted(logs.glob("*.log"))
    assert not (workdir / ".snakemake" / "slurm_logs" / "rule_generate").exists()
    rows = comparable(workdir / "results/adhoc/responses/smollm2/long.jsonl")
    assert len(rows) == n and all(r["error"] is None for r in rows)
