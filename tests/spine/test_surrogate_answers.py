"""An answer holding a lone surrogate is stored and read back, never a crash (issue #24, item 4).

``"\\ud800"`` is valid JSON and a valid Python string but has no UTF-8 form: writing it to the
cache crashed `generate` after the call was paid for, so every rerun paid again. The real
`openai` client against tests/fake_openai_server.py (its ``surrogate`` step).
"""

from __future__ import annotations

import json

import pandas as pd
from fake_openai_server import answer_text

from oncoeval.core.io import encodable_messages, write_table
from oncoeval.core.records import Request, read_responses, write_requests
from oncoeval.models.cache import ResponseCache, cache_key
from oncoeval.workflow.generate import run_generate

KEY_ENV = "ONCOEVAL_TEST_SURROGATE_KEY"
LONE = "\ud800"


def generate(tmp_path, server, prompts, name):
    write_requests(
        tmp_path / "set.jsonl",
        [
            {"request_id": f"r{i}", "messages": [{"role": "user", "content": p}]}
            for i, p in enumerate(prompts)
        ],
    )
    cfg = {
        "id": "gpt",
        "backend": "openai",
        "model": "gpt-x",
        "base_url": server.url,
        "api_key_env": KEY_ENV,
        "max_retries": 0,
    }
    out = tmp_path / name
    counts = run_generate(
        tmp_path / "set.jsonl", out, cfg, tmp_path / "cache", "probe", "set", progress=False
    )
    return counts, read_responses(out)


def test_a_lone_surrogate_answer_is_cached_and_read_back_unchanged(tmp_path, server):
    server.script("loop", ["surrogate"])
    counts, (first,) = generate(tmp_path, server, ["loop"], "first.jsonl")
    answer = answer_text("loop", "gpt-x")
    # The responses file, which every later stage reads, carries U+FFFD in its place.
    assert first.error is None and first.text == answer + " \ufffd"
    # The cache keeps the answer as it came, escaped: valid UTF-8, read back unchanged.
    (cache_file,) = (tmp_path / "cache" / "gpt").glob("*.jsonl")
    assert "\\ud800" in cache_file.read_bytes().decode("utf-8")
    stored = ResponseCache(tmp_path / "cache", "gpt", "probe--set").load()
    assert [row["text"] for row in stored.values()] == [answer + " " + LONE]

    server.reset()
    counts, (again,) = generate(tmp_path, server, ["loop"], "again.jsonl")
    assert server.stats()["total_calls"] == 0 and counts["cached"] == 1  # not paid again
    assert again.text == first.text


def test_surrogates_reach_a_tokenizer_replaced_but_keep_their_cache_key():
    messages = [
        {"role": "user", "content": f"judge this: {LONE}"},
        {"role": "system", "content": "x"},
    ]
    assert encodable_messages(messages)[0]["content"] == "judge this: \ufffd"
    assert encodable_messages(messages)[1] is messages[1]
    request = Request("r", messages, {})
    key = cache_key("hf", {}, request, {})
    assert key != cache_key("hf", {}, Request("r", encodable_messages(messages), {}), {})


def test_a_table_of_answers_with_a_surrogate_is_written(tmp_path):
    df = pd.DataFrame({"raw": [f"a {LONE} b", "plain é"]})
    write_table(df, tmp_path / "t.tsv", tmp_path / "t.md")
    text = (tmp_path / "t.tsv").read_text(encoding="utf-8")
    assert "a \\ud800 b" in text and "plain é" in text


def test_json_escapes_only_when_needed(tmp_path):
    from oncoeval.core.io import json_line

    assert json_line({"t": "é"}) == '{"t": "é"}'
    assert json.loads(json_line({"t": f"é{LONE}"})) == {"t": f"é{LONE}"}
