"""One engine load per local model per wave (oncoeval.workflow.waves), counted on whole runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from conftest import REPO, STUDIES, VLLM_STANDIN, run_snakemake, write_config

from oncoeval.workflow import waves

LAST_PLAN = Path(".snakemake") / "oncoeval-generate-plan.last.json"


def one_local_model_everywhere(model: dict) -> dict:
    """The demo with ``model`` as the evaluated model and every judge of the four studies
    (the replayed rows stay: they load nothing)."""
    demo = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    swap = lambda v: model["id"] if v == "smollm2" else v  # noqa: E731
    config = dict(demo, evaluate=[model["id"]])
    config["models"] = [model] + [m for m in demo["models"] if m["backend"] == "replay"]
    config["studies"] = {}
    for study, block in demo["studies"].items():
        block = dict(block)
        if "evaluate" in block:
            block["evaluate"] = [swap(m) for m in block["evaluate"]]
        if "judges" in block:
            block["judges"] = {role: swap(m) for role, m in block["judges"].items()}
        config["studies"][study] = block
    assert set(config["studies"]) == set(STUDIES)
    return config


def engine_loads(log: Path) -> int:
    return sum("load" in json.loads(line) for line in log.read_text().splitlines())


@pytest.mark.slow
def test_vllm_model_loads_its_engine_once_per_wave_across_the_four_studies(workdir):
    weights = workdir / "standin-8b"  # staged before any job (oncoeval.backends.weights)
    weights.mkdir()
    (weights / "model.safetensors").write_bytes(b"stand-in")
    model = {"id": "standin", "backend": "vllm", "path": str(weights)}
    config = write_config(workdir, one_local_model_everywhere(model), demo=False)
    log = workdir / "engine.jsonl"
    env = {
        "STANDIN_VLLM_LOG": str(log),
        "PYTHONPATH": os.pathsep.join(
            [str(VLLM_STANDIN), str(REPO), os.environ.get("PYTHONPATH", "")]
        ),
    }
    run_snakemake(workdir, configfile=config, env=env)

    plan = json.loads((workdir / LAST_PLAN).read_text())["models"]["standin"]
    sets = plan["sets"]
    assert len({s["study"] for s in sets}) == len(STUDIES)  # judges' sets too
    loads = engine_loads(log)
    # Without a shared engine each set with requests to ask loaded it (12 loads for 16 sets).
    assert 1 <= loads <= plan["waves"] < len(sets), (loads, plan["waves"], len(sets))
    # Every set still has its own responses file and cache file.
    for s in sets:
        assert (
            workdir / f"results/{s['study']}/responses/standin/{s['requestset']}.jsonl"
        ).exists()
    cached = {p.stem for p in (workdir / "cache" / "responses" / "standin").glob("*.jsonl")}
    print(sorted(cached))


# --- one job, several request sets (in-process, the vllm stand-in's engine) --------------------

VLLM = {"id": "standin", "backend": "vllm", "path": "/models/standin-8b"}


def request_set(path: Path, texts: list[str], tokens: int = 4) -> Path:
    from oncoeval.core.records import Request, write_requests

    path.parent.mkdir(parents=True, exist_ok=True)
    write_requests(
        path,
        [
            Request(f"q{i}", [{"role": "user", "content": t}], {"max_new_tokens": tokens}, {"i": i})
            for i, t in enumerate(texts)
        ],
    )
    return path


def generate(tmp_path, name: str, cache: str, siblings=(), **kwargs) -> list:
    from oncoeval.core.records import read_responses
    from oncoeval.workflow.generate import run_generate

    out = tmp_path / "out" / cache / f"{name}.jsonl"
    run_generate(
        tmp_path / f"{name}.jsonl",
        out,
        VLLM,
        tmp_path / cache,
        "study",
        name,
        progress=False,
        siblings=siblings,
        **kwargs,
    )
    return [(r.request_id, r.text, r.meta, r.error) for r in read_responses(out)]


def sibling(tmp_path, name: str, rebuilt: bool = False, created: float = 0.0):
    from oncoeval.workflow.waves import Sibling

    return Sibling("study", name, tmp_path / f"{name}.jsonl", rebuilt, created)


def test_a_job_that_loads_the_engine_answers_its_ready_siblings_and_theirs_load_nothing(
    tmp_path, standin_vllm
):
    import time

    request_set(tmp_path / "a.jsonl", ["first", "second"])
    request_set(tmp_path / "b.jsonl", ["third", "first", "fourth"])
    # Each set on its own (as before): two loads; these are the answers to match.
    alone = {name: generate(tmp_path, name, "alone") for name in ("a", "b")}
    assert engine_loads(standin_vllm) == 2

    # "c" is rebuilt by this run and not built yet (older than the plan): it is not answered.
    request_set(tmp_path / "c.jsonl", ["fifth"])
    later = time.time() + 60
    sibs = [sibling(tmp_path, "b"), sibling(tmp_path, "c", rebuilt=True, created=later)]
    assert generate(tmp_path, "a", "shared", sibs) == alone["a"]
    assert engine_loads(standin_vllm) == 3
    cache = tmp_path / "shared" / "standin"
    assert {p.name for p in cache.glob("*.jsonl")} == {"study--a.jsonl", "study--b.jsonl"}
    # b's own job: every answer cached, no load, the same responses as when asked alone.
    assert generate(tmp_path, "b", "shared", [sibling(tmp_path, "a")]) == alone["b"]
    assert engine_loads(standin_vllm) == 3


def test_a_job_waits_for_the_engine_lock_and_then_reads_the_answers_from_the_cache(
    tmp_path, standin_vllm
):
    import shutil
    import threading

    from oncoeval.workflow.waves import engine_lock

    request_set(tmp_path / "b.jsonl", ["third", "fourth"])
    alone = generate(tmp_path, "b", "alone")
    assert engine_loads(standin_vllm) == 1
    cache = tmp_path / "shared" / "standin"
    cache.mkdir(parents=True)
    result = []
    with engine_lock(cache):  # another job of the model holds the engine
        job = threading.Thread(target=lambda: result.append(generate(tmp_path, "b", "shared")))
        job.start()
        job.join(1.0)
        assert job.is_alive() and engine_loads(standin_vllm) == 1
        # ... and answers b's requests meanwhile (its cache file, as drain_siblings writes it).
        shutil.copy(tmp_path / "alone" / "standin" / "study--b.jsonl", cache / "study--b.jsonl")
    job.join(30)
    assert result == [alone] and engine_loads(standin_vllm) == 1


def test_a_call_that_failed_for_a_sibling_is_asked_again_by_the_siblings_own_job(
    tmp_path, standin_vllm
):
    request_set(tmp_path / "a.jsonl", ["first"])
    # The stand-in runs three requests a step: the first three finish in the first step, the
    # engine fails in the second.
    request_set(tmp_path / "b.jsonl", ["second", "third", "fourth", "ENGINE-FAILS"], tokens=1)
    generate(tmp_path, "a", "shared", [sibling(tmp_path, "b")])
    assert engine_loads(standin_vllm) == 1
    cached = (tmp_path / "shared" / "standin" / "study--b.jsonl").read_text().splitlines()
    assert len(cached) == 3  # the failed call is not cached
    events = len(standin_vllm.read_text().splitlines())
    answers = generate(tmp_path, "b", "shared", max_failed_share=1.0)
    assert engine_loads(standin_vllm) == 2
    asked = [
        json.loads(line)["add"]
        for line in standin_vllm.read_text().splitlines()[events:]
        if "add" in json.loads(line)
    ]
    assert asked == ["q3"]  # only the failed request, as a plain rerun does
    assert [a[3] is None for a in answers] == [True, True, True, False]


# --- On a cluster: one submission per local model and wave, split only to fit its runtime ---


def test_a_wave_that_fits_the_models_runtime_or_has_no_throughput_is_one_submission():
    tokens = {"a": 40_000, "b": 30_000, "c": None}
    # 60 min at 20 tok/s, 80% of it: 57 600 tokens; 70 000 do not fit, without a rate it is one.
    assert waves.shard_wave(tokens, 60, None) == [["a", "b", "c"]]
    assert waves.shard_wave(tokens, 60, 100) == [["a", "b", "c"]]
    assert waves.shard_wave({}, 60, 20) == []


def test_a_wave_too_long_for_the_runtime_is_split_into_the_fewest_submissions_that_fit():
    tokens = {"a": 30_000, "b": 40_000, "c": 20_000, "d": 10_000, "e": 70_000}
    shards = waves.shard_wave(tokens, 60, 20)  # 57 600 tokens per submission
    assert sorted(map(sorted, shards)) == [["a", "c"], ["b", "d"], ["e"]]
    # The last set is never split: alone it needs more than a submission and gets one of its own.
    for shard in shards:
        assert sum(tokens[k] for k in shard) <= 57_600 or len(shard) == 1
    # Every set in exactly one shard, in the order given.
    assert sorted(k for shard in shards for k in shard) == sorted(tokens)
    assert shards == [["a", "c"], ["b", "d"], ["e"]]
    # The share of the runtime left for the load and the clock is the caller's to set.
    assert len(waves.shard_wave(tokens, 60, 20, fill=1.0)) == 3
    assert waves.shard_wave(tokens, 600, 20) == [list(tokens)]


def test_on_a_cluster_a_job_answers_only_the_sets_of_its_own_submission(tmp_path):
    def entry(name, group):
        return {
            "study": "s",
            "requestset": name,
            "requests": str(tmp_path / f"{name}.jsonl"),
            "wave": 1,
            "requests_rebuilt": False,
            "group": group,
        }

    plan = tmp_path / "plan.json"
    sets = [entry("a", "engine-m-w1-1"), entry("b", "engine-m-w1-1"), entry("c", "engine-m-w1-2")]
    plan.write_text(json.dumps({"created": 0, "models": {"m": {"waves": 1, "sets": sets}}}))
    assert [s.requestset for s in waves.siblings("m", "s", "a", plan)] == ["b"]
    assert [s.requestset for s in waves.siblings("m", "s", "c", plan)] == []
    for s in sets:  # a local run (no groups): every other set of the model
        s["group"] = None
    plan.write_text(json.dumps({"created": 0, "models": {"m": {"waves": 1, "sets": sets}}}))
    assert [s.requestset for s in waves.siblings("m", "s", "a", plan)] == ["b", "c"]
