"""Every Eval Ever's model facts come from what each backend declares (issue #37, item 3)."""

from __future__ import annotations

import pytest

from oncoeval.export import eee


@pytest.mark.parametrize(
    ("backend", "deployment", "availability"),
    [
        ("hf", "self_deployed", "open_weights"),
        ("vllm", "self_deployed", "open_weights"),  # was "unknown": the export asked for a name
        ("openai", "externally_managed", "unknown"),
        ("replay", "unknown", "unknown"),
        ("retired-backend", "unknown", "unknown"),  # a record of a backend this version lacks
    ],
)
def test_the_export_says_where_each_backends_models_run(backend, deployment, availability):
    info = eee._model_info("m", {"backend": backend, "identity": {}})
    assert info["inference_platform"] == backend
    details = info["additional_details"]
    assert (details["deployment_type"], details["model_availability"]) == (
        deployment,
        availability,
    )
