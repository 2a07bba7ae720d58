"""Request validation, the response cache and the generate driver, with the replay backend."""

from __future__ import annotations

import json

import pytest

from oncoeval.core.errors import InputError
from oncoeval.core.records import Request, Response, read_requests, read_responses, write_requests
from oncoeval.models.cache import ResponseCache, cache_key
from oncoeval.workflow.generate import effective_params, run_generate


def _write_lines(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))


def _req(rid, text="hello", **params):
    return {"request_id": rid, "messages": [{"role": "user", "content": text}], "params": params}


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("{not json", "not valid JSON"),
        ({"messages": [{"role": "user", "content": "x"}]}, "request_id must be a non-empty string"),
        ({"request_id": "a", "messages": []}, "messages must be a non-empty list"),
        ({"request_id": "a", "messages": [{"role": "robot", "content": "x"}]}, "needs a role"),
        (
            {"request_id": "a", "messages": [{"role": "user", "content": 3}]},
            "content must be a string",
        ),
        (_req("a", temprature=0), "unknown params ['temprature']"),
    ],
)
def test_bad_request_lines_name_file_line_and_problem(tmp_path, row, problem):
    path = tmp_path / "set.jsonl"
    _write_lines(path, [_req("ok"), row])
    with pytest.raises(InputError) as err:
        read_requests(path)
    assert str(path) in str(err.value)
    assert "line 2" in str(err.value)
    assert problem in str(err.value)


def test_duplicate_request_ids_are_refused_with_both_lines(tmp_path):
    path = tmp_path / "set.jsonl"
    _write_lines(path, [_req("a"), _req("b"), _req("a")])
    with pytest.raises(InputError, match=r"line 3.*duplicate request_id 'a' \(first on line 1\)"):
        read_requests(path)


def test_requests_round_trip(tmp_path):
    reqs = [
        Request(
            "a#r0", [{"role": "user", "content": "q"}], {"temperature": 1.0, "seed": 7}, {"k": 1}
        )
    ]
    write_requests(tmp_path / "s.jsonl", reqs)
    assert read_requests(tmp_path / "s.jsonl") == reqs


def test_effective_params_drop_seed_for_greedy_and_cap_tokens():
    cfg = {"max_new_tokens": 100, "generation": {"repetition_penalty": 1.2}}
    greedy = Request("a", [], {"temperature": 0, "seed": 5, "max_new_tokens": 500})
    sampled = Request("b", [], {"temperature": 0.7, "seed": 5, "max_new_tokens": 50})
    assert effective_params(greedy, cfg) == {
        "temperature": 0,
        "max_new_tokens": 100,
        "repetition_penalty": 1.2,
    }
    assert effective_params(sampled, cfg) == {
        "temperature": 0.7,
        "seed": 5,
        "max_new_tokens": 50,
        "repetition_penalty": 1.2,
    }


def test_cache_key_changes_with_every_input():
    req = Request("a", [{"role": "user", "content": "q"}])
    base = cache_key("hf", {"path": "m"}, req, {"temperature": 0})
    assert base == cache_key("hf", {"path": "m"}, req, {"temperature": 0})
    assert base != cache_key("openai", {"path": "m"}, req, {"temperature": 0})
    assert base != cache_key("hf", {"path": "m2"}, req, {"temperature": 0})
    assert base != cache_key("hf", {"path": "m"}, req, {"temperature": 0.5})
    other = Request("a", [{"role": "user", "content": "q2"}])
    assert base != cache_key("hf", {"path": "m"}, other, {"temperature": 0})


def test_cache_skips_failed_calls_and_survives_a_torn_last_line(tmp_path):
    cache = ResponseCache(tmp_path, "m", "study--set")
    cache.append("k1", Response("a", "m", "fine"))
    cache.append("k2", Response("b", "m", None, error="boom"))
    cache.close()
    with open(cache.path, "a") as handle:  # a job killed while writing its next line
        handle.write('{"key": "k3", "respo')
    reopened = ResponseCache(tmp_path, "m", "study--set")
    assert set(reopened.load()) == {"k1"}
    reopened.append("k4", Response("c", "m", "after the crash"))
    reopened.close()
    assert set(ResponseCache(tmp_path, "m", "study--set").load()) == {"k1", "k4"}


def _replay_model(tmp_path, rows):
    path = tmp_path / "answers.jsonl"
    _write_lines(path, rows)
    return {"id": "oracle", "backend": "replay", "path": str(path)}


def test_replay_answers_by_id_and_marks_missing_ones_as_errors(tmp_path):
    _write_lines(tmp_path / "req.jsonl", [dict(_req("a"), meta={"item": 1}), _req("b")])
    model = _replay_model(tmp_path, [{"request_id": "a", "text": "stored answer"}])
    counts = run_generate(
        tmp_path / "req.jsonl",
        tmp_path / "out.jsonl",
        model,
        tmp_path / "cache",
        "adhoc",
        "req",
        progress=False,
    )
    out = read_responses(tmp_path / "out.jsonl")
    assert [r.request_id for r in out] == ["a", "b"]
    assert out[0].text == "stored answer" and out[0].error is None
    assert out[0].meta == {"item": 1}
    assert out[1].text is None and "no stored text" in out[1].error
    assert out[1].error_kind == "replay" and counts["errors"] == 1
    # The answer's line is as it was before rows carried kinds; the failed one names its kind.
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").open()]
    assert "error_kind" not in lines[0] and lines[1]["error_kind"] == "replay"


def test_replay_by_prompt_matches_the_last_user_message(tmp_path):
    _write_lines(tmp_path / "req.jsonl", [_req("x", text="What is PCS?")])
    model = _replay_model(tmp_path, [{"prompt": "What is PCS?", "text": "a score"}])
    model["match_by"] = "prompt"
    run_generate(
        tmp_path / "req.jsonl",
        tmp_path / "out.jsonl",
        model,
        tmp_path / "c",
        "adhoc",
        "req",
        progress=False,
    )
    assert read_responses(tmp_path / "out.jsonl")[0].text == "a score"


@pytest.mark.parametrize(
    ("error", "kind", "status"),
    [
        ("AuthenticationError: Error code: 401 - bad key", "key", None),
        ("InternalServerError: Error code: 500 - down", "server", 500),
        ("APITimeoutError: Request timed out. after timeout_s=5", "timeout", None),
        ("replay: content filtered by the provider (finish_reason content_filter)", "filter", None),
        ("max_cost_usd reached: $1.0000 spent on this model of its $1.0000 cap", "cap", None),
        ("OutOfMemoryError: CUDA out of memory", "other", None),
    ],
)
def test_a_row_written_before_kinds_gets_its_kind_once_at_load(tmp_path, error, kind, status):
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps({"request_id": "a", "model": "m", "text": None, "error": error}))
    (old,) = read_responses(path)
    assert (old.error_kind, old.error_status) == (kind, status)
    # A row that names its kind keeps it, whatever its text says.
    named = Response.from_dict({**old.to_dict(), "error_kind": "other", "error_status": None})
    assert named.error_kind == "other" and named.error_status is None
