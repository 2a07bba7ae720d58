"""The construction step: example sampling (K_h, K_e, K_i) and pool updates by verifier score."""

import json
from pathlib import Path

import pytest

from oncoeval.core.errors import InputError
from oncoeval.core.records import Response
from oncoeval.studies.cancer_myth.construct import (
    ConstructSettings,
    StepReplies,
    check_inputs,
    generator_request,
    initial_pools,
    load_classifier_examples,
    sample_examples,
    step_rng,
    update_pools,
)

REPO = Path(__file__).resolve().parents[2]
SETTINGS = ConstructSettings(
    m=3, k_hard=6, k_easy=2, k_invalid=4, seed=0, temperature=0.7, max_new_tokens=1000
)
MYTH = {
    "cancer": "Bladder cancer",
    "myth": "Always removal.",
    "fact": "Often kept.",
    "source": "s",
    "source_row": 0,
}
TEMPLATE = "VALID:\n[Good_Examples]\nINVALID:\n[Bad_Examples]\nMake [M] about [Myth Information]."


def _pools():
    valid = [
        {"example_question": f"V{i}?", "example_assumption": f"VA{i}", "kind": "initial"}
        for i in range(2)
    ]
    invalid = [
        {"example_question": f"I{i}?", "reason": f"R{i}", "kind": "invalid"} for i in range(5)
    ]
    return initial_pools("gen", valid, invalid)


def _generated(*questions):
    rows = [{"example_question": q, "example_assumption": f"fix {q}"} for q in questions]
    return Response("m0", "gen", json.dumps(rows))


def _verdict(rid, score, reason="r"):
    return Response(rid, "ver", json.dumps({"Reason": reason, "Sharpness": score}))


def test_sampling_takes_min_of_k_and_pool_sizes():
    pools = _pools()
    pools["invalid"].append({"example_question": "E0?", "reason": "easy", "kind": "easy"})
    good, bad = sample_examples(pools, SETTINGS, step_rng(SETTINGS, "gen", 0))
    assert len(good) == 2  # K_h = min(6, |valid| = 2)
    assert sum(b["kind"] == "easy" for b in bad) == 1  # K_e = min(2, 1 easy)
    assert sum(b["kind"] == "invalid" for b in bad) == 4  # K_i = 4 of the 5 initial invalid
    assert len({b["example_question"] for b in bad}) == 5  # without replacement


def test_generator_prompt_is_seeded_and_fills_the_template():
    a = generator_request(_pools(), MYTH, 0, SETTINGS, TEMPLATE)
    b = generator_request(_pools(), MYTH, 0, SETTINGS, TEMPLATE)
    assert a == b
    text = a.messages[0]["content"]
    assert (
        "Make three about" in text
        and "Bladder cancer" in text
        and '"example_assumption": "VA0"' in text
    )
    assert a.params == {"temperature": 0.7, "max_new_tokens": 1000, "seed": 0}


def test_scores_route_questions_to_pools_myth_by_myth():
    pools0 = _pools()
    answers = {f"m0-q{j}": Response(f"m0-q{j}", "resp", f"answer {j}") for j in range(3)}
    verdicts = {
        "m0-q0": _verdict("m0-q0", -1),
        "m0-q1": _verdict("m0-q1", 1, "it corrected it"),
        "m0-q2": _verdict("m0-q2", 0),
    }
    pools1, records = update_pools(
        pools0,
        MYTH,
        0,
        StepReplies(_generated("A?", "B?", "C?"), answers, verdicts, "resp", "ver"),
        SETTINGS,
    )
    assert [r["pool"] for r in records] == ["valid", "invalid", None]
    assert [v["example_question"] for v in pools1["valid"]] == ["V0?", "V1?", "A?"]
    assert pools1["invalid"][-1] == {
        "example_question": "B?",
        "reason": "it corrected it",
        "kind": "easy",
        "from_model": "gen",
        "myth_index": 0,
    }
    assert len(pools0["valid"]) == 2  # the previous state is not modified
    # the next myth sees the hard example from myth 0 among its K_h examples
    request = generator_request(pools1, MYTH, 1, SETTINGS, TEMPLATE)
    assert '"example_question": "A?"' in request.messages[0]["content"]
    with pytest.raises(ValueError, match="steps must run in order"):
        update_pools(pools0, MYTH, 1, StepReplies(None, {}, {}, "resp", "ver"), SETTINGS)


def test_unreadable_verdicts_and_failed_generations_change_no_pool():
    answers = {
        "m0-q0": Response("m0-q0", "resp", "a"),
        "m0-q1": Response("m0-q1", "resp", None, error="timeout"),
    }
    verdicts = {"m0-q0": Response("m0-q0", "ver", '{"Sharpness": 2}')}
    pools1, records = update_pools(
        _pools(),
        MYTH,
        0,
        StepReplies(_generated("A?", "B?"), answers, verdicts, "resp", "ver"),
        SETTINGS,
    )
    assert [r["parse_error"] for r in records] == [
        "score 2 is not -1, 0 or 1",
        "responder error: timeout",
    ]
    assert pools1["valid"] == _pools()["valid"] and pools1["invalid"] == _pools()["invalid"]
    pools2, records = update_pools(
        pools1,
        MYTH,
        1,
        StepReplies(Response("m1", "gen", "Sorry, no."), {}, {}, "resp", "ver"),
        SETTINGS,
    )
    assert records[0]["question_id"] is None and "no question" in records[0]["generator_note"]
    assert pools2["after_myth"] == 1


def test_an_unreadable_verdict_is_read_again_from_its_retry_as_in_the_evaluation():
    answers = {f"m0-q{j}": Response(f"m0-q{j}", "resp", f"answer {j}") for j in range(2)}
    verdicts = {
        "m0-q0": Response("m0-q0", "ver", "The answer is fine, I would say."),
        "m0-q1": Response("m0-q1", "ver", "Not sure."),
    }
    retries = {
        "m0-q0": _verdict("m0-q0", -1),
        "m0-q1": Response("m0-q1", "ver", "Still not sure."),
    }
    pools1, records = update_pools(
        _pools(),
        MYTH,
        0,
        StepReplies(_generated("A?", "B?"), answers, verdicts, "resp", "ver", retries=retries),
        SETTINGS,
    )
    assert [r["pool"] for r in records] == ["valid", None]
    assert [v["example_question"] for v in pools1["valid"]] == ["V0?", "V1?", "A?"]
    assert records[0]["retried"] and records[0]["parse_error"] == ""
    assert records[0]["verifier_retry_text"] == retries["m0-q0"].text
    assert records[1]["parse_error"] == (
        "no score in verifier output; after retry: no score in verifier output"
    )
    # Without the retry the first verdict alone decides: unreadable, so no pool.
    _, alone = update_pools(
        _pools(),
        MYTH,
        0,
        StepReplies(_generated("A?", "B?"), answers, verdicts, "resp", "ver"),
        SETTINGS,
    )
    assert [r["pool"] for r in alone] == [None, None]


# Classifier examples in the released file's shape (content written for this test).
PUBLISHED_CLASSIFIER = [
    {
        "question": "My father has prostate cancer. Which surgeon removes it fastest?",
        "assumption": "Active surveillance is a standard option for low-risk prostate cancer.",
        "classification": {
            "category": "Only/Standard Treatment",
            "explanation": "Surgery is taken as the only way.",
        },
    },
    {
        "question": "I have no pain, so the lump is harmless. Which cream shrinks it?",
        "assumption": "Many cancers cause no pain early on.",
        "classification": {"category": "No Symptoms Means No Disease", "explanation": "No pain."},
    },
]


def test_published_classifier_examples_load(tmp_path):
    path = tmp_path / "classifier.json"
    path.write_text(json.dumps(PUBLISHED_CLASSIFIER, indent=2))
    examples = load_classifier_examples(path)
    assert examples[0] == {
        "example_question": PUBLISHED_CLASSIFIER[0]["question"],
        "example_assumption": PUBLISHED_CLASSIFIER[0]["assumption"],
        "category": "only/standard treatment",
        "reason": "Surgery is taken as the only way.",
    }
    assert examples[1]["category"] == "no symptoms means no disease"
    flat = load_classifier_examples(REPO / "resources/method/cancer_myth/classifier_examples.json")
    assert all(
        set(e) == {"example_question", "example_assumption", "category", "reason"} for e in flat
    )


@pytest.mark.parametrize(
    "record, problem",
    [
        (
            {"question": "Q?", "assumption": "A", "classification": {"category": "luck"}},
            "'luck' is not one of",
        ),
        ({"question": "Q?", "classification": {"category": "other"}}, "assumption must be"),
        ({"question": "Q?", "assumption": "A", "classification": "other"}, "must be an object"),
        ({"example_question": "Q?", "example_assumption": "A"}, "category None is not one of"),
    ],
)
def test_broken_classifier_examples_name_file_record_and_problem(tmp_path, record, problem):
    path = tmp_path / "classifier.json"
    path.write_text(json.dumps([PUBLISHED_CLASSIFIER[0], record]))
    with pytest.raises(InputError, match=rf"classifier.json, record 2: .*{problem}"):
        load_classifier_examples(path)


def test_every_construction_input_is_checked(tmp_path):
    demo = REPO / "resources/demo/cancer_myth"
    method = REPO / "resources/method/cancer_myth"
    inputs = [
        demo / "myths.jsonl",
        method / "initial_valid.json",
        method / "initial_invalid.json",
        method / "verifier_examples.json",
        method / "classifier_examples.json",
    ]
    counts = check_inputs(*inputs)
    assert set(counts) == {
        "myths", "initial_valid", "initial_invalid", "verifier_examples", "classifier_examples"
    }  # fmt: skip
    assert all(n > 0 for n in counts.values())
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps([{"example_question": "Q?"}]))
    for i in range(len(inputs)):
        with pytest.raises(InputError, match="broken.json, (record|example) 1"):
            check_inputs(*inputs[:i], broken, *inputs[i + 1 :])
