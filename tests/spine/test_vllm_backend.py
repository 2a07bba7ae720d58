"""The optional `vllm` backend: refused clearly where vLLM is missing, never imported early."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import VLLM_STANDIN

from oncoeval.backends import get_backend
from oncoeval.backends.vllm_offline import sampling_kwargs
from oncoeval.core.errors import ConfigError
from oncoeval.core.records import Request

CFG = {
    "id": "llama8b",
    "backend": "vllm",
    "path": "/models/llama-3-8b-instruct",
    "dtype": "bfloat16",
    "gpu_memory_utilization": 0.85,
    "max_model_len": 4096,
}


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed")
def test_vllm_backend_is_refused_with_a_clear_message_where_vllm_is_missing():
    with pytest.raises(ConfigError) as refused:
        get_backend("vllm")(CFG, threads=1)
    message = str(refused.value)
    assert "models[llama8b].backend" in message
    assert "pip install 'oncoeval[vllm]'" in message


def test_looking_up_the_backend_does_not_import_vllm():
    code = (
        "import sys; from oncoeval.backends import get_backend; "
        "get_backend('vllm').identity({'id': 'x', 'backend': 'vllm', 'path': 'p'}); "
        "print('vllm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_memory_settings_are_not_part_of_the_model_identity():
    identity = get_backend("vllm").identity(CFG)
    assert "gpu_memory_utilization" not in identity and "max_model_len" not in identity
    assert identity["path"] == CFG["path"] and identity["dtype"] == "bfloat16"


def test_greedy_requests_carry_no_seed_and_sampled_ones_their_own():
    assert sampling_kwargs({"temperature": 0, "max_new_tokens": 5, "seed": 9}) == {
        "max_tokens": 5,
        "temperature": 0.0,
    }
    sampled = sampling_kwargs({"temperature": 0.7, "top_p": 0.9, "seed": 9, "stop": "##"})
    assert sampled["seed"] == 9 and sampled["top_p"] == 0.9 and sampled["stop"] == ["##"]


def engine_calls(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def request(rid: str, text: str, **params) -> Request:
    return Request(rid, [{"role": "user", "content": text}], {"max_new_tokens": 8, **params}, {})


def test_engine_gets_chat_template_ids_and_each_request_its_own_settings(standin_vllm):
    backend = get_backend("vllm")({**CFG, "quantization": "none"}, threads=1)
    requests = [
        request("greedy", "abc"),
        request("sampled", "abcdef", temperature=0.8, top_p=0.9, seed=11),
        request("short", "x", max_new_tokens=2, stop=["##"]),
    ]
    answers = {r.request_id: r for r in backend.generate(requests)}

    calls = engine_calls(standin_vllm)
    load = calls[0]["load"]
    assert load["model"] == CFG["path"] and load["quantization"] is None
    assert load["max_model_len"] == 4096 and load["dtype"] == "bfloat16"
    sent = [c for c in calls if "add" in c]
    assert [s["add"] for s in sent] == ["greedy", "sampled", "short"]
    template = "<user>{}\n<assistant>"
    assert [s["prompt_token_ids"] for s in sent] == [
        [ord(c) for c in template.format(text)] for text in ("abc", "abcdef", "x")
    ]
    assert sent[0]["params"]["temperature"] == 0.0 and sent[0]["params"]["seed"] is None
    assert sent[1]["params"]["seed"] == 11 and sent[1]["params"]["top_p"] == 0.9
    assert sent[2]["params"]["stop"] == ["##"] and sent[2]["params"]["max_tokens"] == 2

    assert answers["greedy"].text == "n=21 t=0.0 seed=None"
    assert answers["greedy"].prompt_tokens == 21 and answers["greedy"].completion_tokens == 3
    assert answers["sampled"].text == "n=24 t=0.8 seed=11"
    assert answers["short"].finish_reason == "length" and answers["short"].completion_tokens == 2


def test_each_answer_is_handed_back_the_step_it_finishes(standin_vllm):
    backend = get_backend("vllm")(CFG, threads=1)
    # The stand-in writes one word a step, at most three words: these finish at steps 1, 2, 3.
    requests = [request(f"r{i}", f"question {i}", max_new_tokens=i + 1) for i in range(3)]
    answers = backend.generate(requests)
    for step, rid in enumerate(["r0", "r1", "r2"], start=1):
        assert next(answers).request_id == rid
        # The job gets (and caches) each answer before the engine is stepped again.
        assert len([c for c in engine_calls(standin_vllm) if "step" in c]) == step
    assert list(answers) == []


def test_a_refused_prompt_fails_alone_and_an_engine_failure_fails_only_the_unanswered(
    standin_vllm,
):
    backend = get_backend("vllm")({**CFG, "max_model_len": 40}, threads=1)
    requests = [
        request("short", "a", max_new_tokens=1),
        request("too-long", "x" * 60),
        request("slow", "b", max_new_tokens=3),
        request("late", "c"),
        request("crash", "ENGINE-FAILS"),
    ]
    by_id = {r.request_id: r for r in backend.generate(requests)}
    assert sorted(by_id) == sorted(r.request_id for r in requests)
    assert "longer than max_model_len" in by_id["too-long"].error
    assert by_id["short"].error is None and by_id["short"].text == "n=19"
    # The crash comes at the second step, with "slow" and "late" still unanswered: all three
    # fail (and, failures never being cached, are asked again on the next run).
    for rid in ("slow", "late", "crash"):
        assert by_id[rid].text is None and "stand-in engine failure" in by_id[rid].error
    assert not backend.llm.llm_engine.has_unfinished_requests()


def test_a_request_the_engine_drops_fails_instead_of_waiting_forever(standin_vllm):
    backend = get_backend("vllm")(CFG, threads=1)
    requests = [request("kept", "a", max_new_tokens=2), request("lost", "ENGINE-DROPS")]
    by_id = {r.request_id: r for r in backend.generate(requests)}
    assert by_id["kept"].error is None
    assert "dropped these requests" in by_id["lost"].error


@pytest.mark.slow
def test_a_vllm_model_runs_through_the_generate_rule_and_reruns_from_cache(workdir, tmp_path):
    from conftest import REPO, run_snakemake, write_config

    probe = workdir / "probe.jsonl"
    with open(probe, "w") as handle:
        for i in range(4):
            row = {
                "request_id": f"q{i}",
                "messages": [{"role": "user", "content": f"question {i}"}],
                "params": {"temperature": 0, "max_new_tokens": 8},
            }
            handle.write(json.dumps(row) + "\n")
    weights = workdir / "llama-3-8b-instruct"  # staged before any job (oncoeval.backends.weights)
    weights.mkdir()
    (weights / "model.safetensors").write_bytes(b"stand-in")
    model = {**CFG, "path": str(weights)}
    cfg = write_config(
        workdir, {"models": [model], "evaluate": ["llama8b"], "adhoc": {"probe": probe.name}}
    )
    log = tmp_path / "engine.jsonl"
    env = {"PYTHONPATH": f"{VLLM_STANDIN}{os.pathsep}{REPO}", "STANDIN_VLLM_LOG": str(log)}
    run_snakemake(workdir, configfile=cfg, env=env)

    rows = [json.loads(x) for x in (workdir / "results/adhoc/responses/llama8b/probe.jsonl").open()]
    n_ids = len("<user>question 0\n<assistant>")  # the stand-in's chat rendering, a char a token
    assert [r["text"] for r in rows] == [f"n={n_ids} t=0.0 seed=None"] * 4
    added = [c for c in engine_calls(log) if "add" in c]
    assert [c["add"] for c in added] == [f"q{i}" for i in range(4)]
    assert {c["params"]["max_tokens"] for c in added} == {8}

    log.unlink()
    (workdir / "results/adhoc/responses/llama8b/probe.jsonl").unlink()
    run_snakemake(workdir, configfile=cfg, env=env)
    # Every answer came from the cache: the engine was not asked again.
    assert not log.exists() or not [c for c in engine_calls(log) if "add" in c]
