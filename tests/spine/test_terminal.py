"""`make run`'s terminal is one a person can read (issue #35 item 6): progress and results, not
every job's block (Snakemake's whole output goes to a log file whose path is printed), no line
over 100 columns, a failed call's message and cure without a traceback or a dict dump, and a
server that fails every call named as such rather than "transient"."""

from __future__ import annotations

import secrets
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, link_workflow, write_config
from fake_openai_server import FakeOpenAIServer
from helpers import MAKE, openai_entry, run_make

from oncoeval.workflow.terminal import WIDTH, fold

KEY_ENV = "ONCOEVAL_TEST_TERMINAL_KEY_" + secrets.token_hex(4).upper()


def make_run(workdir: Path, config: Path, args: str, env: dict) -> subprocess.CompletedProcess:
    """`make run` in ``workdir``, as a terminal shows it."""
    return run_make(workdir, "run", f"CONFIG={config}", f"ARGS={args}", env=env, timeout=900)


def openai_model(mid: str, url: str) -> dict:
    settings = {"max_retries": 1, "timeout_s": 5}
    return openai_entry(url, KEY_ENV, settings, id=mid, model=f"model-{mid}")


def test_fold_breaks_at_spaces_within_the_width_and_indents_continuations():
    line = "  To fix: " + " ".join(["word"] * 40)
    folded = fold(line, width=30)
    assert all(len(part) <= 30 for part in folded)
    assert folded[0].startswith("  To fix: word") and folded[1].startswith("    word")
    assert " ".join(" ".join(folded).split()) == " ".join(line.split())
    assert fold("short", width=30) == ["short"]


@pytest.mark.slow
@pytest.mark.skipif(MAKE is None, reason="make is not installed")
def test_make_run_against_failing_servers_prints_cures_not_tracebacks(tmp_path):
    workdir = link_workflow(tmp_path / "run")
    # One server refuses the key (401) and one fails every call (500); --keep-going lets both
    # generate jobs fail in one run.
    with (
        FakeOpenAIServer(api_key="sk-right-" + secrets.token_hex(8)) as keyed,
        FakeOpenAIServer(always=500) as down,
    ):
        models = [openai_model("keyed", keyed.url), openai_model("down", down.url)]
        questions = REPO / "resources/demo/cancer_myth/questions.json"
        config = write_config(
            workdir,
            {
                "models": models,
                "evaluate": ["keyed", "down"],
                "studies": {
                    "cancer_myth": {
                        "enabled": True,
                        "questions": str(questions),
                        "judges": {"verifier": "keyed"},
                    }
                },
            },
            demo=False,
        )
        wrong_key = {KEY_ENV: "sk-wrong-" + secrets.token_hex(8)}
        proc = make_run(workdir, config, "--config limit=3 --keep-going", wrong_key)
        assert down.stats()["statuses"] == {"500": 6}  # 3 questions, 1 retry each
    out = proc.stdout
    assert proc.returncode != 0, out[-3000:]
    lines = out.splitlines()
    too_wide = [line for line in lines if len(line) > WIDTH]
    assert not too_wide and WIDTH == 100, too_wide
    # No traceback, no dict dump (the job's `done: {...}` record), no job blocks.
    for noise in ("Traceback", "{'", "localrule ", "    input:", "Shell command", "=" * 20):
        assert noise not in out, noise
    assert "transient" not in out and "a plain rerun asks" not in out
    # The last screen: both failures with their cure, read across the folded lines.
    said = " ".join(" ".join(lines[-15:]).split())
    assert f"every call to {down.url} failed with 500: check the server" in said
    assert f"put a valid key in the environment variable {KEY_ENV}" in said
    assert "keyed / cancer_myth: 3 of 3 requests failed" in said
    # Snakemake's whole output stays in the log file the terminal names first and last.
    first = lines[0].removeprefix("Snakemake's full log: ")
    assert first != lines[0] and lines[-3].endswith(first), lines[-3:]
    # make's own line says the report was not updated (the previous one is not this run's).
    assert (
        lines[-2] == "make run: the run failed; the report (results/report.html) was not updated."
    )
    full = (workdir / first).read_text()
    assert "localrule generate:" in full and "Traceback" not in full
    assert "[2/" in out and "jobs, " in out  # progress lines


def test_on_a_terminal_the_progress_line_is_rewritten_in_place():
    import io

    from oncoeval.workflow.terminal import Terminal

    class Tty(io.StringIO):
        def isatty(self):
            return True

    screen = Tty()
    shown = Terminal(screen)
    shown.show(
        ["[1/3 jobs, 33%]: a", "[2/3 jobs, 67%]: b", "Failed: rule b", "[3/3 jobs, 100%]: c"]
    )
    shown.end_line()
    assert screen.getvalue() == (
        "\r\033[K[1/3 jobs, 33%]: a\r\033[K[2/3 jobs, 67%]: b\nFailed: rule b\n"
        "\r\033[K[3/3 jobs, 100%]: c\n"
    )
    piped = io.StringIO()
    Terminal(piped).show(["[1/3 jobs, 33%]: a", "[2/3 jobs, 67%]: b"])
    assert piped.getvalue() == "[1/3 jobs, 33%]: a\n[2/3 jobs, 67%]: b\n"
