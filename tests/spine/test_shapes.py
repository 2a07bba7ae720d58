"""Structured verdicts: the shape travels with the request and every backend enforces it.

openai: the real client against tests/fake_openai_server.py, which checks the response_format
it receives; vllm: the stand-in engine (vLLM needs CUDA); hf: the embedded SmolLM2 constrained by
llguidance in the own decode loop.
"""

from __future__ import annotations

import json
import os

import pytest
from fake_openai_server import FakeOpenAIServer, answer_text

from oncoeval.backends import get_backend
from oncoeval.backends.openai_api import request_kwargs
from oncoeval.core.errors import InputError
from oncoeval.core.records import Request, read_requests
from oncoeval.core.shapes import choice_shape, json_schema_shape, shape_problem, text_problem
from oncoeval.models.cache import cache_key
from tests.conftest import SHARED_MODEL_STORE

VERDICT = {
    "type": "object",
    "properties": {
        "Reason": {"type": "string", "maxLength": 200},
        "Sharpness": {"enum": [-1, 0, 1]},
    },
    "required": ["Reason", "Sharpness"],
    "additionalProperties": False,
}
KEY_ENV = "ONCOEVAL_TEST_OPENAI_KEY"


def shaped(rid, text, shape, **params) -> Request:
    params = {"temperature": 0.0, "max_new_tokens": 60, "response_shape": shape, **params}
    return Request(rid, [{"role": "user", "content": text}], params)


# --- the shape itself --------------------------------------------------------------------------


def test_shape_problems_are_named():
    assert shape_problem(json_schema_shape(VERDICT)) == ""
    assert shape_problem(choice_shape(["yes", "no"])) == ""
    assert "exactly one" in shape_problem({"choice": ["a"], "json_schema": {}})
    assert "non-empty list" in shape_problem({"choice": []})
    assert "not a valid JSON schema" in shape_problem({"json_schema": {"type": "nonsense"}})


def test_a_bad_shape_in_a_request_set_stops_before_any_model_call(tmp_path):
    path = tmp_path / "verify.jsonl"
    bad = {"request_id": "q7", "messages": [{"role": "user", "content": "x"}]}
    bad["params"] = {"response_shape": {"choice": "yes"}}
    path.write_text(json.dumps(bad) + "\n")
    with pytest.raises(InputError) as err:
        read_requests(path)
    assert "verify.jsonl" in str(err.value) and "q7" in str(err.value)
    assert "choice must be a non-empty list" in str(err.value)


def test_the_shape_is_part_of_the_cache_key():
    plain = Request("a", [{"role": "user", "content": "x"}], {"temperature": 0})
    keys = {
        cache_key("hf", {}, plain, params)
        for params in (
            {"temperature": 0},
            {"temperature": 0, "response_shape": choice_shape(["yes", "no"])},
            {"temperature": 0, "response_shape": choice_shape(["no", "yes"])},
            {"temperature": 0, "response_shape": json_schema_shape(VERDICT)},
        )
    }
    assert len(keys) == 4


def test_text_problem():
    shape = json_schema_shape(VERDICT)
    assert text_problem(shape, '{"Reason": "ok", "Sharpness": 0}') == ""
    assert "schema" in text_problem(shape, '{"Reason": "ok", "Sharpness": 2}')
    assert text_problem(shape, "Sharpness: 1").startswith("not JSON")
    assert text_problem(choice_shape(["yes", "no"]), "maybe") == "not one of ['yes', 'no']"


# --- openai ------------------------------------------------------------------------------------


def openai_model(server) -> dict:
    return {
        "id": "gpt-test",
        "backend": "openai",
        "model": "gpt-x",
        "base_url": server.url,
        "api_key_env": KEY_ENV,
        "concurrency": 2,
        "timeout_s": 5,
        "max_retries": 0,
    }


def test_openai_kwargs_carry_the_shape():
    kwargs = request_kwargs(shaped("a", "x", json_schema_shape(VERDICT)), {"model": "m"})
    assert kwargs["response_format"]["json_schema"]["schema"] == VERDICT
    assert "extra_body" not in kwargs
    kwargs = request_kwargs(shaped("a", "x", choice_shape(["yes", "no"])), {"model": "m"})
    assert kwargs["extra_body"] == {"structured_outputs": {"choice": ["yes", "no"]}}


def test_openai_sends_response_format_and_gets_a_valid_verdict(key):
    with FakeOpenAIServer(api_key=key) as server:
        backend = get_backend("openai")(openai_model(server), threads=1)
        requests = [
            shaped("v", "judge this", json_schema_shape(VERDICT)),
            shaped("c", "yes or no?", choice_shape(["yes", "no"])),
        ]
        answers = {r.request_id: r for r in backend.generate(requests)}
        backend.close()
        body = server.bodies["judge this"][0]
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "verdict"
    assert fmt["json_schema"]["schema"] == VERDICT and fmt["json_schema"]["strict"] is True
    assert json.loads(answers["v"].text) == {"Reason": "x", "Sharpness": -1}
    assert answers["v"].structured_fallback is None
    assert answers["c"].text == "yes"


def test_a_server_that_refuses_the_shape_is_asked_with_the_prompt_and_the_reason_kept(key):
    with FakeOpenAIServer(api_key=key, structured="refuse") as server:
        backend = get_backend("openai")(openai_model(server), threads=1)
        [answer] = list(backend.generate([shaped("v", "judge this", json_schema_shape(VERDICT))]))
        backend.close()
        bodies = server.bodies["judge this"]
    assert len(bodies) == 2
    assert "response_format" in bodies[0] and "response_format" not in bodies[1]
    assert answer.error is None and answer.text == answer_text("judge this", "gpt-x")
    assert answer.structured_fallback.startswith("server refused the response shape")
    assert "BadRequestError" in answer.structured_fallback
    assert key not in answer.structured_fallback


# --- vllm (stand-in engine) --------------------------------------------------------------------


def test_vllm_gets_structured_outputs(standin_vllm):
    backend = get_backend("vllm")({"id": "v", "backend": "vllm", "path": "/m"}, threads=1)
    requests = [
        shaped("v", "judge", json_schema_shape(VERDICT)),
        shaped("c", "pick", choice_shape(["no", "yes"])),
        Request("free", [{"role": "user", "content": "hi"}], {"max_new_tokens": 3}),
    ]
    answers = {r.request_id: r for r in backend.generate(requests)}
    added = {
        c["add"]: c["params"]
        for c in map(json.loads, standin_vllm.read_text().splitlines())
        if "add" in c
    }
    assert added["v"]["structured_outputs"] == {"json": VERDICT, "choice": None}
    assert added["c"]["structured_outputs"] == {"json": None, "choice": ["no", "yes"]}
    assert added["free"]["structured_outputs"] is None
    assert text_problem(json_schema_shape(VERDICT), answers["v"].text) == ""
    assert answers["c"].text == "no"


# --- hf: the embedded SmolLM2 under llguidance -------------------------------------------------


@pytest.mark.slow
def test_embedded_model_gives_only_valid_verdicts():
    os.environ.setdefault("ONCOEVAL_MODEL_STORE", str(SHARED_MODEL_STORE))
    cfg = {
        "id": "smollm2",
        "backend": "hf",
        "path": "embedded:smollm2-135m-instruct",
        "dtype": "float32",
        "batch_size": 4,
    }
    backend = get_backend("hf")(cfg, threads=1)
    question = "Does this answer correct the myth that sugar feeds cancer? Answer: "
    verdict, yes_no = json_schema_shape(VERDICT), choice_shape(["yes", "no"])
    requests = [
        shaped("greedy", question + "It does not.", verdict),
        shaped("sampled", question + "Eat less sugar.", verdict, temperature=0.9, seed=5),
        shaped("choice", "Is chemotherapy a cancer treatment? yes or no", yes_no),
        Request("free", [{"role": "user", "content": "Say hello."}], {"max_new_tokens": 8}),
    ]
    answers = {r.request_id: r for r in backend.generate(requests)}
    backend.close()
    for rid, shape in (("greedy", verdict), ("sampled", verdict), ("choice", yes_no)):
        assert answers[rid].error is None
        assert text_problem(shape, answers[rid].text) == "", (rid, answers[rid].text)
        assert answers[rid].finish_reason == "stop"
    assert answers["free"].text and answers["free"].error is None


def test_cancer_myth_verdict_shape_fits_the_token_limit_and_the_parser():
    from fake_openai_server import schema_instance

    from oncoeval.studies.cancer_myth.parse import parse_verifier
    from oncoeval.studies.cancer_myth.requests import VerifierPrompt

    prompt = VerifierPrompt("[Examples] [Question to Evaluate]", "", [], 64, structured=True)
    params = prompt.request("q1", "question", "information", "answer").params
    schema = params["response_shape"]["json_schema"]
    assert schema["properties"]["Reason"]["maxLength"] == 64 - 24
    assert shape_problem(params["response_shape"]) == ""
    for score in (-1, 0, 1):
        verdict = {**schema_instance(schema), "Sharpness": score}
        assert parse_verifier(json.dumps(verdict)).score == score
    plain = VerifierPrompt("[Examples]", "", [], 64).request("q1", "q", "i", "a").params
    assert "response_shape" not in plain
