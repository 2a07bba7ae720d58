"""The likelihood probe (Min-K% Prob): requests that ask a backend for the token log-probabilities
of an item's text and of its spliced control, which backends can answer them, and the embedded
model answering two items through the hf backend."""

import json
import os

import pytest

from oncoeval.backends.hf import Backend as HfBackend
from oncoeval.core.records import Response, read_requests, write_requests
from oncoeval.core.source import source_file
from oncoeval.exposure import audit
from oncoeval.exposure.probes import (
    CONTROL_SUFFIX,
    ProbeSettings,
    build_probes,
    read_template,
    sentences,
    splice,
)
from oncoeval.workflow import exposure as exposure_wf
from tests.conftest import SHARED_MODEL_STORE

SETTINGS = ProbeSettings("Cancer-Myth", "question", seed=0, n_items=None, max_new_tokens=64)
TEMPLATES = source_file("config/prompts/exposure")


def demo_items():
    rows = json.loads(open(source_file("resources/demo/cancer_myth/questions.json")).read())
    return [{"item_id": str(i), "text": r["example_question"]} for i, r in enumerate(rows)]


def test_splice_keeps_the_first_sentence_and_takes_the_others_rest():
    assert sentences("One here. Two there? Three!") == ["One here.", "Two there?", "Three!"]
    assert splice("A b. C d.", "E f. G h. I j.") == "A b. G h. I j."
    assert splice("Only one sentence.", "E f. G h.") is None


def test_likelihood_requests_carry_the_item_verbatim_and_ask_for_log_probabilities(tmp_path):
    items = demo_items()
    template = read_template(TEMPLATES, "likelihood")
    requests, skipped = build_probes(items, "likelihood", template, SETTINGS)
    assert not skipped and len(requests) == 2 * len(items)
    by_id = {r.request_id: r for r in requests}
    texts = {it["text"] for it in items}
    for it in items:
        item, control = by_id[it["item_id"]], by_id[it["item_id"] + CONTROL_SUFFIX]
        assert item.messages == [{"role": "user", "content": it["text"]}]
        assert item.params == {"temperature": 0.0, "max_new_tokens": 1, "text_logprobs": True}
        spliced = control.messages[0]["content"]
        # the item's first sentence, then the rest of another item: not an item itself
        assert spliced.startswith(sentences(it["text"])[0] + " ") and spliced not in texts
        rest = spliced[len(sentences(it["text"])[0]) + 1 :]
        assert any(t.endswith(rest) for t in texts - {it["text"]})
    # the request set is valid as the generate rule reads it
    write_requests(tmp_path / "r.jsonl", requests)
    assert len(read_requests(tmp_path / "r.jsonl")) == len(requests)


def test_only_requests_that_asked_carry_token_logprobs():
    assert "token_logprobs" not in Response("a", "m", "text").to_dict()
    row = Response("a", "m", "", token_logprobs=[-1.5]).to_dict()
    assert Response.from_dict(row).token_logprobs == [-1.5]


def _config(*models):
    return {
        "models": list(models),
        "evaluate": [m["id"] for m in models],
        "studies": {"cancer_myth": {"exposure": {"probes": ["completion", "likelihood"]}}},
    }


def test_a_backend_without_log_probabilities_gets_no_likelihood_requests_and_a_reason():
    hf = {"id": "local", "backend": "hf", "path": "embedded:smollm2-135m-instruct"}
    api = {"id": "api", "backend": "openai", "model": "gpt-4o"}
    config = _config(hf, api)
    assert exposure_wf.model_probes(config, "cancer_myth", "local") == ["completion", "likelihood"]
    assert exposure_wf.model_probes(config, "cancer_myth", "api") == ["completion"]
    assert exposure_wf.score_inputs(config, "cancer_myth", "api")["requests"] == [
        exposure_wf.requests("cancer_myth", "completion")
    ]
    assert exposure_wf.table_not_run(config, "cancer_myth") == {
        "local": {},
        "api": {
            "likelihood": "log-probabilities of a given text not available from the openai backend"
        },
    }


@pytest.mark.slow
def test_the_embedded_model_returns_the_log_probability_of_each_token():
    os.environ.setdefault("ONCOEVAL_MODEL_STORE", str(SHARED_MODEL_STORE))
    cfg = {"id": "smollm2", "backend": "hf", "path": "embedded:smollm2-135m-instruct"}
    backend = HfBackend({**cfg, "dtype": "float32"}, threads=1)
    items = demo_items()[:2]
    requests, _ = build_probes(
        items, "likelihood", read_template(TEMPLATES, "likelihood"), SETTINGS
    )
    answers = {r.request_id: r for r in backend.generate(requests)}
    backend.close()
    for req in requests:
        resp = answers[req.request_id]
        n_tokens = len(
            backend.tokenizer(req.messages[0]["content"], add_special_tokens=False)["input_ids"]
        )
        assert resp.error is None and resp.completion_tokens == 0
        # one log-probability per token of the text (the first scored after the BOS token)
        assert len(resp.token_logprobs) == n_tokens and max(resp.token_logprobs) <= 0
    rows = audit.item_rows("likelihood", requests, answers)
    assert len(rows) == 2 and rows[["score", "control_score"]].notna().all().all()
    assert (rows["score"] < 0).all()
