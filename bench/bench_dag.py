"""DAG scale: `snakemake -n` for 1, 10 and 50 models with every enabled study: jobs and seconds.

The config is config/config.yaml with its study blocks as they are, the models replaced by
`replay` models (judges keep their ids), and an ad-hoc request set. Jobs must grow linearly in
models (a fixed number per model), and not at all in items: the same 10-model config with a
request set 100 times larger must give the same job count (no per-item jobs).

Run: ``python -m bench dag`` (results in bench/results/dag.json).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from bench._fake_api import REPO, make_workdir
from oncoeval.config import checks as oc

SIZES = (1, 10, 50)
REPEATS = 2


def make_config(root: Path, n_models: int, n_items: int) -> Path:
    base = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    judges = []
    for study in oc.enabled_studies(base):
        judges += list(oc.study_judges(base, study).values())
    evaluated = [f"m{i:02d}" for i in range(n_models)]
    replay = root / "replay"
    replay.mkdir(exist_ok=True)
    ids = list(dict.fromkeys(evaluated + judges))
    base["models"] = [{"id": mid, "backend": "replay", "path": str(replay)} for mid in ids]
    base["evaluate"] = evaluated
    for block in base["studies"].values():
        if block and block.get("evaluate"):
            block["evaluate"] = evaluated
        if block and block.get("verifier_for"):
            # The demo's stored reference set and its verdicts are not among the bench's models.
            block["verifier_for"] = {}
    requests = root / f"adhoc-{n_items}.jsonl"
    with requests.open("w") as fh:
        for i in range(n_items):
            row = {"request_id": f"q{i}", "messages": [{"role": "user", "content": f"q {i}"}]}
            fh.write(json.dumps(row) + "\n")
    base["adhoc"] = {"bench": str(requests)}
    path = root / f"config-{n_models}-{n_items}.yaml"
    path.write_text(yaml.safe_dump(base, sort_keys=False))
    return path


def dry_run(root: Path, configfile: Path) -> tuple[dict[str, int], float]:
    env = dict(os.environ, PYTHONPATH=f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    env["HF_HUB_OFFLINE"] = "1"
    cmd = [sys.executable, "-m", "snakemake", "--workflow-profile", "none", "--cores", "2"]
    cmd += ["-n", "--quiet", "rules", "--configfile", str(configfile)]
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=900)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-4000:])
    return job_counts(proc.stdout + proc.stderr), seconds


def job_counts(log: str) -> dict[str, int]:
    """Snakemake's "job count" table in a run's output, as {rule: n} with "total"."""
    counts, in_table = {}, False
    for line in log.splitlines():
        parts = line.split()
        if parts[:2] == ["job", "count"]:
            in_table = True
        elif in_table and len(parts) == 2 and parts[1].isdigit():
            counts[parts[0]] = int(parts[1])
        elif in_table and parts and not set(parts[0]) <= {"-"}:
            in_table = False
    return counts


def run(out_dir: Path) -> dict:
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-dag-") as tmp:
        root = make_workdir(Path(tmp))
        cases = [(n, 10) for n in SIZES] + [(10, 1000)]
        for n_models, n_items in cases:
            cfg = make_config(root, n_models, n_items)
            timings, counts = [], {}
            for _ in range(REPEATS):
                counts, seconds = dry_run(root, cfg)
                timings.append(seconds)
            rows.append(
                {
                    "models": n_models,
                    "items": n_items,
                    "jobs": counts.get("total", 0),
                    "jobs_by_rule": {k: v for k, v in counts.items() if k != "total"},
                    "seconds_min": round(min(timings), 2),
                    "seconds_all": [round(t, 2) for t in timings],
                }
            )
            print(rows[-1], flush=True)
    by = {(r["models"], r["items"]): r for r in rows}
    one, ten, fifty = (by[(n, 10)] for n in SIZES)
    per_model = (fifty["jobs"] - ten["jobs"]) / 40
    linear = (
        ten["jobs"] + per_model * 40 == fifty["jobs"] and one["jobs"] + per_model * 9 == ten["jobs"]
    )
    same_for_items = by[(10, 1000)]["jobs"] == ten["jobs"]
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    summary = [
        f"Enabled studies: {', '.join(oc.enabled_studies(config)) or 'none (ad-hoc set only)'}.",
        "",
        "| models | items | jobs | `snakemake -n` s (min of 2) |",
        "|---:|---:|---:|---:|",
        *[f"| {r['models']} | {r['items']} | {r['jobs']} | {r['seconds_min']} |" for r in rows],
        "",
        f"Jobs per added model: {per_model:g}; exactly linear in models: {linear}; "
        f"job count unchanged with 100x items: {same_for_items}.",
        f"Seconds ratio 50 vs 10 models: {fifty['seconds_min'] / ten['seconds_min']:.2f} "
        f"(jobs ratio {fifty['jobs'] / ten['jobs']:.2f}); 10 vs 1: "
        f"{ten['seconds_min'] / one['seconds_min']:.2f}.",
    ]
    return {
        "rows": rows,
        "jobs_per_model": per_model,
        "linear": linear,
        "no_per_item_jobs": same_for_items,
        "summary": summary,
    }
