"""The schema check gives one message per problem, never a spurious one (issue #24, item 6)."""

from __future__ import annotations

from oncoeval.config.checks import schema_problems


def test_a_bad_value_in_a_model_entry_is_one_message_without_an_unevaluated_line():
    models = [{"id": "g", "backend": "openai", "model": "x", "concurrency": "many"}]
    assert schema_problems({"models": models}) == [
        "models[0].concurrency: 'many' is not of type 'integer'"
    ]


def test_an_unknown_key_is_named_alone_beside_a_bad_value():
    models = [{"id": "g", "backend": "openai", "model": "x", "timeout_s": -1, "bogus": 1}]
    assert schema_problems({"models": models}) == [
        "models[0]: Unevaluated properties are not allowed ('bogus' was unexpected)",
        "models[0].timeout_s: -1 is less than or equal to the minimum of 0",
    ]
    # a key of another backend is unknown to this one
    models = [{"id": "r", "backend": "replay", "path": "p", "batch_size": 2, "concurrency": 3}]
    assert schema_problems({"models": models}) == [
        "models[0]: Unevaluated properties are not allowed ('batch_size', 'concurrency' were "
        "unexpected)"
    ]


def test_an_unknown_or_missing_backend_is_the_one_problem_of_its_entry():
    models = [
        {"id": "a", "backend": "foo", "model": "x"},
        {"id": "b", "model": "x"},
        {"id": "c", "backend": "hf"},
    ]
    assert schema_problems({"models": models}) == [
        "models[0].backend: 'foo' is not one of ['hf', 'openai', 'replay', 'vllm']",
        "models[1]: 'backend' is a required property",
        "models[2]: 'path' is a required property",
    ]
