"""Through Snakemake: a bad input stops the run in its study's prepare step, before `generate`.

The evaluated model is an API model served by a call-counting local server, so "no model call" is
checked where it happens: the server saw no request, and no responses file exists.
"""

from __future__ import annotations

import json
import shutil

import pytest
from fake_openai_server import FakeOpenAIServer

from tests.conftest import REPO, STUDIES, run_snakemake, write_config

KEY_ENV = "BAD_INPUT_WORKFLOW_KEY"


def _spoil_profiles(tmp):
    path = tmp / "profiles.csv"
    shutil.copy(REPO / "resources/demo/side_effects/profiles.csv", path)
    path.write_bytes(path.read_bytes() + b'demo99,"radiation","radiation to the r\xe9gion"\n')
    return path, {"profiles": str(path)}, "line 92", "not UTF-8"


def _spoil_questions(tmp):
    path = tmp / "questions.json"
    questions = json.loads((REPO / "resources/demo/cancer_myth/questions.json").read_text())
    path.write_text(json.dumps({"questions": questions}))
    return path, {"questions": str(path)}, "record 1 (key 'questions')", "give the list itself"


def _spoil_guideline(tmp):
    path = tmp / "guideline.json"
    text = (REPO / "resources/demo/guidelines/guideline.json").read_text()
    path.write_text(text.replace('"root": "LUNG-1-1",', '"root": "LUNG-1-1", "root": "LUNG-2-1",'))
    return path, {"guideline": str(path)}, "line ", "key 'root' given twice"


def _spoil_adhoc(tmp):
    path = tmp / "probe.jsonl"
    probe = {"request_id": "p1", "messages": [{"role": "user", "content": "hi"}]}
    path.write_text(json.dumps({**probe, "params": {"temperature": "hot"}}) + "\n")
    return path, {"probe": str(path)}, "line 1 (request_id 'p1')", "params.temperature: 'hot'"


@pytest.mark.slow
def test_bad_inputs_stop_the_workflow_before_generate(workdir, tmp_path):
    """Three studies and an ad-hoc set with one bad input each (latin-1 bytes, a wrapped list, a
    guideline tree giving root twice, a temperature of "hot"), run with --keep-going: each stops
    in the step that reads it, with its message and no traceback, and no job that depends on
    them starts."""
    spoilt = {
        "side_effects": _spoil_profiles(tmp_path),
        "cancer_myth": _spoil_questions(tmp_path),
        "guidelines": _spoil_guideline(tmp_path),
        "adhoc": _spoil_adhoc(tmp_path),
    }
    with FakeOpenAIServer() as server:
        model = {
            "id": "api",
            "backend": "openai",
            "model": "m",
            "base_url": server.url,
            "api_key_env": KEY_ENV,
            "phi_safe": True,
        }
        studies = {s: {"enabled": False} for s in STUDIES}
        studies["side_effects"] = {
            "enabled": True,
            "evaluate": ["api"],
            "matcher": {"method": "lexical"},
        }
        # judge validation asks the verifier about human-scored answers, a branch that does not
        # read the questions: left out, so every model call left depends on a bad input
        studies["cancer_myth"] = {
            "enabled": True,
            # The demo's own list and verifier_for name its stored reference set.
            "evaluate": ["api"],
            "verifier_for": None,
            "judges": {"verifier": "api", "classifier": "api"},
            "human_scores": None,
        }
        studies["guidelines"] = {
            "enabled": True,
            "evaluate": ["api"],
            "judges": {"generator": None, "chooser": None},
        }
        for study, (_, block, _, _) in spoilt.items():
            if study != "adhoc":
                studies[study].update(block)
        cfg = write_config(
            workdir,
            {
                "models": [model],
                "evaluate": ["api"],
                "studies": studies,
                "adhoc": spoilt["adhoc"][1],
            },
        )
        proc = run_snakemake(
            workdir, "--keep-going", configfile=cfg, check=False, env={KEY_ENV: "sk-test"}
        )
        assert server.stats()["total_calls"] == 0
    assert proc.returncode != 0
    logs = "\n".join(p.read_text() for p in (workdir / "logs").rglob("*") if p.is_file())
    # A clean stop shows the project's message, not a Python traceback (which reads as a crash).
    assert "Traceback" not in logs and "Traceback" not in proc.stdout + proc.stderr
    for study, (bad, _, record, problem) in spoilt.items():
        message = next(ln for ln in logs.splitlines() if str(bad) in ln)
        assert record in message and problem in message, message
        assert not list((workdir / "results").glob(f"{study}/responses/**/*.jsonl"))


def test_a_config_file_with_a_key_twice_stops_snakemake_before_the_dag(workdir, tmp_path):
    """rules/common.smk reads every config file again, strictly: Snakemake's own reader would
    keep the second `limit` silently."""
    text = (REPO / "config" / "config.yaml").read_text(encoding="utf-8")
    bad = tmp_path / "twice.yaml"
    bad.write_text(text + "limit: 2\nlimit: 3\n", encoding="utf-8")
    proc = run_snakemake(workdir, "-n", configfile=bad, check=False, timeout=300)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "limit: the key 'limit' is given twice in one mapping (lines " in out, out[-3000:]
    assert "Traceback" not in out
