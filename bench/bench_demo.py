"""The demo's wall time before and after a commit, side by side in one run: ``python -m bench demo``.

Two trees: the commit named by ``ONCOEVAL_BENCH_BEFORE`` (default b1f9bfd, the last commit before
one engine load per model per wave) and this checkout's ``HEAD``. Each is exported with
``git archive`` into a temporary folder and runs the default config as ``make run`` does
(``snakemake --cores 2`` with the default profile) from a cold cache, with its own ``oncoeval``
first on ``PYTHONPATH`` (the environment's editable install would otherwise answer for both).
The runs alternate, before then after, ``ONCOEVAL_BENCH_DEMO_PAIRS`` times (default 1), so a
drift in the machine's speed lands on both sides. Recorded per run: wall seconds, jobs by rule and
the embedded model's engine loads (the ``hf`` backend's ``loaded smollm2 in`` log lines).
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from bench._fake_api import REPO
from bench.bench_dag import job_counts

BEFORE = os.environ.get("ONCOEVAL_BENCH_BEFORE", "b1f9bfd")
PAIRS = int(os.environ.get("ONCOEVAL_BENCH_DEMO_PAIRS", "1"))
TIMEOUT_S = 3 * 3600
LOAD_LINE = re.compile(r"loaded smollm2 in ([0-9.]+) s")


def export_tree(rev: str, dest: Path) -> str:
    """Unpack ``rev`` of this repository into ``dest``; return its full commit id."""
    commit = subprocess.run(
        ["git", "rev-parse", rev], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout.strip()
    archive = subprocess.run(["git", "archive", commit], cwd=REPO, check=True, capture_output=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(dest, filter="data")
    return commit


def demo_env(tree: Path) -> dict:
    """The environment a tree's run gets: its own package first (the editable install of this
    checkout would otherwise answer every ``import oncoeval``), offline."""
    return dict(os.environ, PYTHONPATH=str(tree), HF_HUB_OFFLINE="1")


def run_demo(tree: Path) -> dict:
    env = demo_env(tree)
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2"]
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"the demo failed in {tree}:\n{proc.stderr[-4000:]}")
    loads = [
        float(m.group(1))
        for log in sorted((tree / "logs").rglob("*.log"))
        for m in LOAD_LINE.finditer(log.read_text(errors="replace"))
    ]
    counts = job_counts(proc.stderr + proc.stdout)
    return {
        "wall_s": round(seconds, 1),
        "jobs": counts.get("total", 0),
        "generate_jobs": counts.get("generate", 0),
        "engine_loads": len(loads),
        "load_s": round(sum(loads), 1),
    }


def run(out_dir: Path) -> dict:
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-demo-") as tmp:
        for pair in range(PAIRS):
            for side, rev in (("before", BEFORE), ("after", "HEAD")):
                tree = Path(tmp) / f"{side}-{pair}"
                commit = export_tree(rev, tree)
                row = {"side": side, "commit": commit[:10], "pair": pair, **run_demo(tree)}
                rows.append(row)
                print(row, flush=True)
    ratios = [
        b["wall_s"] / a["wall_s"]
        for b, a in zip(rows[::2], rows[1::2], strict=True)
        if a["wall_s"] > 0
    ]
    ratios.sort()
    median = ratios[len(ratios) // 2] if ratios else float("nan")
    summary = [
        "The demo (`snakemake --cores 2`, default config, cold cache), before and after, in turn:",
        "",
        "| run | commit | wall s | jobs | generate jobs | engine loads | load s |",
        "|---|---|---:|---:|---:|---:|---:|",
        *[
            f"| {r['side']} {r['pair'] + 1} | {r['commit']} | {r['wall_s']} | {r['jobs']} | "
            f"{r['generate_jobs']} | {r['engine_loads']} | {r['load_s']} |"
            for r in rows
        ],
        "",
        f"Wall time before / after, pair by pair: {', '.join(f'{r:.2f}x' for r in ratios)} "
        f"(median {median:.2f}x).",
    ]
    return {"rows": rows, "before_over_after": ratios, "summary": summary}
