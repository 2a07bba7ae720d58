"""Local GPU slots: two concurrent GPU jobs on one workstation never share a card."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from oncoeval.workflow import gpuslots

# A child process that claims one GPU slot the way the generate script does, reports the card it
# got and its CUDA_VISIBLE_DEVICES, and holds the slot for a while.
CHILD = """
import json, os, sys, time
from oncoeval.workflow.gpuslots import local_gpu_slot
with local_gpu_slot(int(sys.argv[1])) as mine:
    print(json.dumps({"devices": mine, "cvd": os.environ.get("CUDA_VISIBLE_DEVICES"),
                      "t": time.time()}), flush=True)
    time.sleep(float(sys.argv[2]))
"""


def spawn(tmp_path, n_gpu, hold_s, **env):
    from tests.conftest import workflow_env

    full = workflow_env({"ONCOEVAL_GPU_LOCK_DIR": str(tmp_path / "locks"), **env})
    full.pop("SLURM_JOB_ID", None)
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(n_gpu), str(hold_s)],
        env=full,
        stdout=subprocess.PIPE,
        text=True,
    )


def result(proc):
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    return json.loads(out.strip().splitlines()[-1])


def test_two_concurrent_local_jobs_get_different_cards(tmp_path):
    procs = [spawn(tmp_path, 1, 2.0, ONCOEVAL_GPUS="0,1") for _ in range(2)]
    first, second = (result(p) for p in procs)
    assert {first["cvd"], second["cvd"]} == {"0", "1"}
    assert first["devices"] == [first["cvd"]]


def test_third_job_waits_for_a_free_card(tmp_path):
    holders = [spawn(tmp_path, 1, 3.0, ONCOEVAL_GPUS="0,1") for _ in range(2)]
    time.sleep(1.0)  # both cards are now held
    waiter = spawn(tmp_path, 1, 0.0, ONCOEVAL_GPUS="0,1")
    held = [result(p) for p in holders]
    got = result(waiter)
    assert got["cvd"] in {"0", "1"}
    # It started only after a holder released its card (each holds for 3 s).
    assert got["t"] >= min(h["t"] for h in held) + 2.5


def test_two_card_job_gets_both_cards(tmp_path):
    got = result(spawn(tmp_path, 2, 0.0, ONCOEVAL_GPUS="0,1,2"))
    assert len(got["devices"]) == 2 and got["cvd"] == ",".join(got["devices"])


def test_slurm_job_keeps_the_devices_slurm_gave_it(tmp_path):
    env = {"SLURM_JOB_ID": "42", "CUDA_VISIBLE_DEVICES": "3", "ONCOEVAL_GPUS": "0,1"}
    with gpuslots.local_gpu_slot(1, env=env) as mine:
        assert mine is None and env["CUDA_VISIBLE_DEVICES"] == "3"
    assert env["CUDA_VISIBLE_DEVICES"] == "3"


def test_cpu_job_and_gpu_less_machine_change_nothing():
    env = {"CUDA_VISIBLE_DEVICES": ""}
    with gpuslots.local_gpu_slot(0, env=env) as mine:
        assert mine is None
    with gpuslots.local_gpu_slot(1, env=env) as mine:  # no card: the backend runs on the CPU
        assert mine is None and env["CUDA_VISIBLE_DEVICES"] == ""


def test_slot_restores_the_parent_setting(tmp_path):
    env = {"ONCOEVAL_GPUS": "5", "ONCOEVAL_GPU_LOCK_DIR": str(tmp_path)}
    with gpuslots.local_gpu_slot(1, env=env) as mine:
        assert mine == ["5"] and env["CUDA_VISIBLE_DEVICES"] == "5"
    assert "CUDA_VISIBLE_DEVICES" not in env


def test_asking_for_more_cards_than_exist_fails_clearly(tmp_path):
    with pytest.raises(RuntimeError, match="asks for 2 GPU"):
        with gpuslots.claim(2, ["0"], tmp_path):
            pass


def test_claim_times_out_when_all_cards_stay_busy(tmp_path):
    with gpuslots.claim(1, ["0"], tmp_path):
        with pytest.raises(TimeoutError):
            with gpuslots.claim(1, ["0"], tmp_path, timeout_s=0.3, poll_s=0.1):
                pass
