"""Setups many tests share: an `openai` model entry for the fake server, a request set, and a
config of studies run on their stored answers.

Imported as `helpers` (tests/ is on the path, as for fake_openai_server); workflow fixtures and the
Snakemake runner stay in tests/conftest.py.
"""

from __future__ import annotations

import copy
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO, layered, other_studies_off, workflow_env

from oncoeval.core.records import write_requests


def openai_entry(url: str, key_env: str, settings: dict | None = None, **overrides) -> dict:
    """A model entry ``gpt`` of the `openai` backend that asks model ``gpt-x`` at ``url`` with
    the key in ``key_env``; ``settings`` (a test module's own), then ``overrides`` (a test's),
    add keys or replace these."""
    return {
        "id": "gpt",
        "backend": "openai",
        "model": "gpt-x",
        "base_url": url,
        "api_key_env": key_env,
        **(settings or {}),
        **overrides,
    }


def request_rows(
    prompts, ids: str = "r{i}", max_new_tokens: int | None = 64, meta: str | None = None
) -> list[dict]:
    """One request row per prompt, a single user message each: id ``ids`` with ``{i}`` its
    place, temperature 0 and ``max_new_tokens`` (None: no parameters), ``{meta: i}`` as its meta
    when ``meta`` names a key."""
    params = {} if max_new_tokens is None else {"temperature": 0, "max_new_tokens": max_new_tokens}
    rows = []
    for i, prompt in enumerate(prompts):
        row = {
            "request_id": ids.format(i=i),
            "messages": [{"role": "user", "content": prompt}],
            "params": dict(params),
        }
        if meta:
            row["meta"] = {meta: i}
        rows.append(row)
    return rows


def write_request_set(path: Path, prompts, **rows) -> Path:
    """A request set file of ``request_rows(prompts, **rows)`` at ``path``."""
    write_requests(path, request_rows(prompts, **rows))
    return path


# Each study of the demo answered by its stored answers (and Cancer-Myth judged by its stored
# verdicts, as in the demo): a run of these calls no model.
REPLAYED = {
    "side_effects": {
        "enabled": True,
        "evaluate": ["side-effects-reference-replay"],
        "matcher": {"method": "lexical"},
    },
    "cancer_myth": {
        "enabled": True,
        "evaluate": ["cancer-myth-reference-replay"],
        "judges": {"verifier": "cancer-myth-reference-verdicts", "classifier": None},
        "human_scores": None,
        # the demo's exposure audit stays off: these runs call no model (tests/exposure runs it)
        "exposure": {"enabled": False},
    },
    "coral": {"enabled": True, "evaluate": ["coral-reference-replay"]},
    "guidelines": {
        "enabled": True,
        "evaluate": ["demo-oracle-replay", "demo-noisy-replay"],
        "judges": {"generator": None, "chooser": None},
    },
}


def replayed(*studies: str, **settings: dict) -> dict:
    """A test config (for conftest.write_config) that runs ``studies`` on their stored answers
    (REPLAYED), every other study off; ``settings`` (study -> settings) are layered onto a
    study's block."""
    blocks = {s: layered(REPLAYED[s], settings.get(s, {})) for s in studies}
    return copy.deepcopy({"evaluate": [], "studies": {**other_studies_off(*studies), **blocks}})


MAKE = shutil.which("make")


def run_make(
    workdir: Path, *args: str, env: dict | None = None, timeout: float = 1200
) -> subprocess.CompletedProcess:
    """The repository's Makefile run in ``workdir`` with this interpreter's environment (its
    `setup` step, which installs the environment, is taken as done); stdout and stderr in one
    stream, in the order a terminal shows them. Under `make test` the outer make's MAKELEVEL
    reaches this one, which would then print "Entering/Leaving directory" around its output as
    no user's top-level `make run` does: --no-print-directory keeps the terminal the user's."""
    return subprocess.run(
        [MAKE, "--no-print-directory", "-f", str(REPO / "Makefile"), f"VENV={sys.prefix}",
         "-o", "setup", *args],
        cwd=workdir, env=workflow_env(env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, timeout=timeout,
    )  # fmt: skip
