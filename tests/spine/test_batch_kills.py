"""Batch mode survives a kill at any step (issue #29).

A `generate` job in batch mode is killed (SIGKILL, in a forked copy of this process so that each
kill costs no interpreter start) right after its Nth step that changes something at the provider
or on disk, for N = 1..20: each call of the client's files and batches endpoints, each write of the
job's manifest and each line appended to the cache. "After" means the call has returned, so a kill
after ``batches.create`` falls between the batch's creation and the manifest write that records
it. A plain rerun must then answer every request, bill no line twice and leave no file behind.
"""

from __future__ import annotations

import functools
import os
import signal

import openai.resources
from fake_batch_server import FakeBatchServer
from test_batch_api import (
    KEY_ENV,  # noqa: F401 (the shared `key` fixture sets it)
    generate,
    model,
    prompts,
    write_requests,
)

from oncoeval.backends import batch
from oncoeval.models.cache import ResponseCache
from oncoeval.workflow.generate import run_generate

KILL_POINTS = range(1, 21)
STEPS = [
    (openai.resources.Files, ("create", "list", "content", "delete")),
    (openai.resources.Batches, ("create", "retrieve", "list")),
    (batch.Manifest, ("save",)),
    (ResponseCache, ("append",)),
]


def kill_after(n: int, tell) -> None:
    """Make this process SIGKILL itself right after its ``n``th step (``tell``: its name)."""
    count = [0]

    def counted(fn, name):
        @functools.wraps(fn)
        def step(*args, **kwargs):
            result = fn(*args, **kwargs)
            count[0] += 1
            if count[0] == n:
                tell(name)
                os.kill(os.getpid(), signal.SIGKILL)
            return result

        return step

    for owner, names in STEPS:
        for name in names:
            setattr(owner, name, counted(getattr(owner, name), f"{owner.__name__}.{name}"))


def killed_job(n: int, cfg: dict, work) -> tuple[int, str]:
    """Run the job in a forked child killed after step ``n``: (exit code, the step's name)."""
    requests = write_requests(work / "requests.jsonl", prompts(6))
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(read)
            kill_after(n, lambda name: os.write(write, name.encode()))
            run_generate(requests, work / "killed.jsonl", cfg, work / "cache", "adhoc", "probe")
        finally:
            os._exit(3)  # finished (or failed) without being killed
    os.close(write)
    _, status = os.waitpid(pid, 0)
    with os.fdopen(read) as handle:
        return os.waitstatus_to_exitcode(status), handle.read()


def test_twenty_kill_points_then_a_rerun_bill_no_line_twice(tmp_path, key):
    names = []
    for n in KILL_POINTS:
        work = tmp_path / f"kill{n:02d}"
        work.mkdir()
        with FakeBatchServer(api_key=key) as server:
            server.plans = ["expire:2"]  # the run resubmits too: its steps are killed as well
            cfg = model(server)
            code, name = killed_job(n, cfg, work)
            assert code == -signal.SIGKILL, (n, code)  # killed, not finished
            names.append(name)
            rows = generate(work, cfg, n=6)
            assert all(r["error"] is None for r in rows), n
            assert sorted(server.billed.values()) == [1] * 6, (n, dict(server.billed))
            assert server.files == {}, n  # uploads and outputs deleted, none orphaned
            assert not (work / "cache/gpt/.batches/adhoc--probe.json").exists()
    # Every kind of step was hit, the gap between create and manifest included, both for the
    # first batch and for the resubmission of the lines it left.
    assert names.count("Batches.create") == 2, names
    assert {"Files.create", "Manifest.save", "ResponseCache.append", "Files.delete"} <= set(names)
