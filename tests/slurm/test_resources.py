"""What each generate job asks the scheduler for, and the sbatch flags the SLURM plugin makes of it."""

from __future__ import annotations

import re

import pytest

from oncoeval.config.checks import generate_resources
from tests.conftest import run_snakemake, write_config

GPU_MODEL = {
    "id": "big",
    "backend": "hf",
    "path": "/models/big",
    "resources": {
        "gpu": 2,
        "mem_mb": 64000,
        "runtime": 600,
        "gpu_model": "a100",
        "constraint": "a100|h100",
        "slurm_partition": "gpu",
        "slurm_extra": "--qos=long",
    },
}


def test_hf_model_resources_come_from_its_config_entry():
    assert generate_resources(GPU_MODEL) == GPU_MODEL["resources"]


def test_gpu_model_without_gpus_is_not_passed_on():
    cfg = {"id": "m", "backend": "hf", "path": "p", "resources": {"gpu_model": "a100"}}
    assert generate_resources(cfg) == {"gpu": 0, "mem_mb": 4000, "runtime": 120}


@pytest.mark.parametrize(
    "cfg",
    [
        {"id": "api", "backend": "openai", "model": "gpt"},
        {"id": "rep", "backend": "replay", "path": "x"},
    ],
)
def test_api_and_replay_models_ask_for_no_gpu(cfg):
    res = generate_resources(cfg)
    assert res.get("gpu", 0) == 0 and "gpu_model" not in res
    assert res.get("api_calls", 0) == (1 if cfg["backend"] == "openai" else 0)


class FakeResources(dict):
    __getattr__ = dict.__getitem__


class FakeJob:
    def __init__(self, resources, threads=2):
        self.resources = FakeResources(resources)
        self.threads = threads


def sbatch_for(resources):
    from snakemake_executor_plugin_slurm.submit_string import get_submit_command
    from snakemake_executor_plugin_slurm.utils import set_gres_string

    job = FakeJob(resources)
    params = {
        "run_uuid": "u",
        "slurm_logfile": "log",
        "comment_str": "c",
        "account": "-A acc",
        "partition": f"-p {resources.get('slurm_partition', 'cpu')}",
        "workdir": ".",
    }
    return get_submit_command(job, params) + set_gres_string(job)


def test_plugin_turns_model_resources_into_sbatch_flags():
    call = sbatch_for(generate_resources(GPU_MODEL))
    assert "--gpus=a100:2" in call
    assert "-C 'a100|h100'" in call
    assert "-p gpu" in call
    assert "--mem 64000" in call and "-t 600" in call
    assert "--qos=long" in call
    assert "--cpus-per-task=2" in call


def test_plugin_asks_no_gpu_for_a_cpu_job():
    call = sbatch_for(generate_resources({"id": "r", "backend": "replay", "path": "x"}))
    assert "--gpus" not in call and "--gres" not in call and " -C " not in call


def test_dry_run_gives_each_model_its_resources_and_keeps_profile_defaults(workdir, tmp_path):
    requests = tmp_path / "req.jsonl"
    requests.write_text(
        '{"request_id": "q1", "messages": [{"role": "user", "content": "hi"}], "params": {}}\n'
    )
    config = {
        "models": [
            {**GPU_MODEL, "path": str(tmp_path)},
            {"id": "rep", "backend": "replay", "path": str(tmp_path)},
        ],
        "evaluate": ["big", "rep"],
        "adhoc": {"try": str(requests)},
    }
    cfg = write_config(workdir, config)
    # As a profile would set it: the site's default partition for every job.
    proc = run_snakemake(
        workdir, "-n", "--default-resources", "slurm_partition=cpu", configfile=cfg
    )
    jobs, model = {}, None
    for line in (proc.stdout + proc.stderr).splitlines():
        if m := re.search(r"wildcards: .*model=(\w+)", line):
            model = m.group(1)
        elif line.strip().startswith("resources:") and model:
            jobs[model], model = line, None
    assert "gpu=2" in jobs["big"] and "gpu_model=a100" in jobs["big"]
    assert "slurm_partition=gpu" in jobs["big"] and "constraint=a100|h100" in jobs["big"]
    assert "gpu=0" in jobs["rep"] and "gpu_model" not in jobs["rep"]
    # A model without its own partition keeps the profile's default (not "no partition").
    assert "slurm_partition=cpu" in jobs["rep"] and "constraint" not in jobs["rep"]


@pytest.mark.parametrize("profile", ["slurm", "slurm-noaccounting"])
def test_slurm_profiles_are_valid_and_set_site_defaults(workdir, tmp_path, profile):
    requests = tmp_path / "req.jsonl"
    requests.write_text(
        '{"request_id": "q1", "messages": [{"role": "user", "content": "hi"}], "params": {}}\n'
    )
    config = {
        "models": [{"id": "rep", "backend": "replay", "path": str(tmp_path)}],
        "evaluate": ["rep"],
        "adhoc": {"try": str(requests)},
    }
    cfg = write_config(workdir, config)
    proc = run_snakemake(workdir, "-n", "--workflow-profile", f"profiles/{profile}", configfile=cfg)
    out = proc.stdout + proc.stderr
    assert f"profiles/{profile} for setting default command line arguments" in out
    generate = out[out.index("rule generate:") :].split("\n\n")[0]
    assert "slurm_partition=cpu" in generate and "slurm_account=" in generate
    assert "gpu=0" in generate
