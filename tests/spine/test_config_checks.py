"""Broken configs stop before any job, with a message naming the key (issue #2, test 4)."""

from __future__ import annotations

import pytest
from conftest import STUDIES, run_snakemake, write_config

HF = {"id": "smollm2", "backend": "hf", "path": "embedded:smollm2-135m-instruct"}
API = {
    "id": "remote",
    "backend": "openai",
    "model": "gpt-4o",
    "api_key_env": "ONCOEVAL_TEST_NO_SUCH_KEY",
}
ADHOC_ONLY = {"studies": {s: {"enabled": False} for s in STUDIES}}

CASES = {
    "unknown backend": (
        {"models": [{"id": "m", "backend": "llamafile"}], "evaluate": ["m"]},
        ["models[0].backend: 'llamafile' is not one of"],
    ),
    "missing field": (
        {"models": [{"id": "m", "backend": "replay"}], "evaluate": ["m"]},
        ["models[0]: 'path' is a required property"],
    ),
    "bad id": (
        {"models": [dict(HF, id="Smol LM2")], "evaluate": ["Smol LM2"]},
        ["models[0].id: 'Smol LM2' does not match"],
    ),
    "unknown evaluated model": (
        {"models": [HF], "evaluate": ["gpt5"]},
        ["evaluate: unknown model id 'gpt5'"],
    ),
    "duplicate id": (
        {"models": [HF, HF], "evaluate": ["smollm2"]},
        ["models[1].id: duplicate model id 'smollm2'"],
    ),
    "PHI routed to an API model": (
        {
            "models": [HF, API],
            "evaluate": ["smollm2"],
            "studies": {
                "side_effects": {"enabled": True, "contains_phi": True, "evaluate": ["remote"]}
            },
        },
        ["studies.side_effects.contains_phi", "'remote'", "phi_safe"],
    ),
    "missing key variable": (
        {"models": [HF, API], "evaluate": ["remote"]},
        ["ONCOEVAL_TEST_NO_SUCH_KEY"],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_broken_config_stops_before_any_job(workdir, case):
    overrides, expected = CASES[case]
    config = {**ADHOC_ONLY, **overrides}
    config["studies"] = {**ADHOC_ONLY["studies"], **overrides.get("studies", {})}
    config["adhoc"] = {"probe": "resources/tests/probe-requests.jsonl"}
    path = write_config(workdir, config)
    proc = run_snakemake(workdir, "-n", configfile=path, check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    for fragment in expected:
        assert fragment in output, f"{fragment!r} not in:\n{output[-3000:]}"
    assert not (workdir / "results").exists()


def test_default_config_builds_its_dag_and_lints_clean(workdir):
    run_snakemake(workdir, "-n")
    lint = run_snakemake(workdir, "--lint", check=False)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert "Congratulations, your workflow is in a good condition!" in lint.stdout + lint.stderr
