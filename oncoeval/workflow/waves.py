"""One engine load per local model per wave: the run's plan of `generate` jobs, and the lock.

Every request set stays its own `generate` job with its own responses file and cache file, so
the DAG, the item cache, "add a model: only its jobs" and a plain rerun after a failure are as
before. What changes is who loads the engine. When the run starts (the Snakefile's ``onstart``,
after the DAG is built), :func:`write_plan` records every `generate` job the run will make, per
model, with its wave: how many of that model's `generate` jobs lie on the longest chain of
dependencies above it, itself included. The fewest loads a model can make is its number of
waves. A job of a local model (hf, vllm) that has to call the engine takes the model's engine
lock (:func:`engine_lock`) first; while it holds the loaded engine it also answers the model's
other request sets of this run whose requests are already built (its "ready siblings"), writing
their answers to their own cache files. Their own jobs then find every answer cached and load
nothing; a job that waited for the lock re-reads the cache first.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import os
import time
from collections import Counter, defaultdict
from pathlib import Path

from ..core.io import atomic_write, held_lock

log = logging.getLogger(__name__)

# Where the run's plan lives: the Snakefile's onstart writes it; at the end of the run
# onsuccess/onerror move it to LAST_PLAN_PATH (a record of the last run's waves), so that no job
# of a later run takes it for its own.
PLAN_PATH = Path(".snakemake") / "oncoeval-generate-plan.json"
LAST_PLAN_PATH = Path(".snakemake") / "oncoeval-generate-plan.last.json"
# Group ids of the cluster submissions that run one local model's wave (group_by_wave).
GROUP_PREFIX = "engine-"
# The share of a model's `runtime` a shard may fill with generation; the rest is left for
# loading the engine, the queue's clock and the estimate's error.
RUNTIME_FILL = 0.8


def generate_plan(dag, rule: str = "generate") -> dict:
    """The run's `generate` jobs per model, each with its wave, read from Snakemake's DAG.

    ``{"created": time, "models": {model: {"waves": n, "sets": [{"study", "requestset",
    "requests", "wave", "requests_rebuilt"}, ...]}}}``; ``requests_rebuilt``: the requests file
    is made again by this run, so it is ready only once it is newer than the plan.
    """
    needrun = set(dag.needrun_jobs())
    deps = dag.dependencies
    chains: dict = {}  # job -> Counter(model -> generate jobs of that model above the job)

    def is_generate(job) -> bool:
        return job.rule.name == rule and job in needrun

    def above(job) -> Counter:
        if job not in chains:
            best: Counter = Counter()
            for dep in deps[job]:
                chain = Counter(above(dep))
                if is_generate(dep):
                    chain[dep.wildcards.model] += 1
                for model, n in chain.items():
                    best[model] = max(best[model], n)
            chains[job] = best
        return chains[job]

    models: dict[str, dict] = {}
    for job in sorted(filter(is_generate, needrun), key=lambda j: str(j.output[0])):
        wc = job.wildcards
        requests = str(job.input.requests)
        producers = [d for d, files in deps[job].items() if requests in map(str, files)]
        entry = models.setdefault(wc.model, {"waves": 0, "sets": []})
        wave = above(job)[wc.model] + 1
        entry["waves"] = max(entry["waves"], wave)
        group = job.group if isinstance(job.group, str) else None
        entry["sets"].append(
            {
                "study": wc.study,
                "requestset": wc.requestset,
                "requests": requests,
                "wave": wave,
                "requests_rebuilt": any(p in needrun for p in producers),
                # On a cluster: the submission (one per model, wave and shard) it runs in.
                "group": group if group and group.startswith(GROUP_PREFIX) else None,
            }
        )
    return {"created": time.time(), "models": models}


def order_by_wave(dag, rule: str = "generate") -> dict:
    """Order ready jobs so that each wave's requests are built before its first `generate` job.

    A job's depth is the number of `generate` jobs (any model) on the longest chain of this
    run's jobs above it, a `generate` job counting itself. Every job gets priority
    ``1 + deepest - depth``: the jobs that build a wave's requests (depth ``d``) go before that
    wave's `generate` jobs (``d + 1``), and the last wave's cached jobs before the next wave's.
    A priority only orders jobs that are ready together: nothing waits longer. Every priority is
    at least 1 (Snakemake's ILP scheduler would rather not schedule a job of negative priority).
    Returns the depths, by job."""
    deps = dag.dependencies
    needrun = set(dag.needrun_jobs())
    depths: dict = {}

    def depth(job) -> int:
        if job not in depths:
            above = [depth(d) for d in deps[job] if d in needrun]
            depths[job] = max(above, default=0) + (job.rule.name == rule)
        return depths[job]

    for job in needrun:
        depth(job)
    deepest = max(depths.values(), default=0)
    by_rule: dict = {}
    for job, d in depths.items():
        key = tuple(sorted((k, str(v)) for k, v in job.wildcards_dict.items()))
        by_rule.setdefault(job.rule, {})[key] = 1 + deepest - d
    for job_rule, table in by_rule.items():
        job_rule.priority = _Priority(table)
    dag.update_priority()
    return depths


class _Priority:
    """A rule's priority by its jobs' wildcards (Snakemake calls it with a job's wildcards)."""

    def __init__(self, table: dict):
        self.table = table

    def __call__(self, wildcards):
        return self.table.get(tuple(sorted((k, str(v)) for k, v in wildcards.items())), 0)


def shard_wave(
    tokens: dict, runtime_min: float, tokens_per_s: float | None, fill: float = RUNTIME_FILL
) -> list[list]:
    """Split one model's wave into shards, each one cluster submission that should finish
    within the model's ``runtime``.

    ``tokens``: set -> the new tokens it may ask for (None when unknown). Without a throughput
    (``tokens_per_s`` None) the wave is one shard, as when it fits: ``fill`` of ``runtime_min``
    at ``tokens_per_s`` generated tokens per second. Otherwise the fewest shards by first fit,
    largest set first (a set is never split: its job is one `generate` job; a set that alone
    does not fit gets a shard of its own). A set of unknown size counts as empty. Shards and
    the sets in them come in the order of ``tokens``.
    """
    order = list(tokens)
    if not order:
        return []
    size = {k: max(0, int(tokens[k] or 0)) for k in order}
    capacity = math.inf if not tokens_per_s else max(0.0, fill * runtime_min * 60 * tokens_per_s)
    if sum(size.values()) <= capacity:
        return [order]
    shards: list[dict] = []  # {"sets": [...], "left": tokens}
    for key in sorted(order, key=lambda k: (-size[k], order.index(k))):
        home = next((sh for sh in shards if size[key] <= sh["left"]), None)
        if home is None:
            home = {"sets": [], "left": capacity}
            shards.append(home)
        home["sets"].append(key)
        home["left"] -= size[key]
    out = [sorted(sh["sets"], key=order.index) for sh in shards]
    return sorted(out, key=lambda sets: order.index(sets[0]))


def group_by_wave(workflow, depths: dict, model_cfg, rule: str = "generate") -> dict:
    """On a cluster: one submission per local model and wave (shard), not one per request set.

    Every `generate` job of a local model (hf, vllm) that the run makes goes into the group
    ``engine-{model}-w{depth}`` (``-{n}`` per shard), where ``depth`` is the job's number of
    `generate` jobs of any model on the longest chain above it, itself included (from
    :func:`order_by_wave`): a group never depends on itself, even when two local models judge
    each other's answers. Snakemake submits each group as one job; inside it, the first job to
    run loads the engine and answers the group's other sets (:func:`siblings`), whose jobs then
    find their answers cached. The group asks the scheduler for what one job of the model asks
    (its ``resources:``; runtime the model's ``runtime``), not the sum of its jobs. A wave is
    split (:func:`shard_wave`) only when its estimated new tokens at the model's
    ``resources.tokens_per_s`` would not fit its ``runtime``. Local runs (no submission)
    change nothing. Returns the group id per job."""
    from ..backends import get_backend
    from ..config.checks import generate_resources
    from ..report.estimate import RequestSets

    if workflow.local_exec:
        return {}
    dag = workflow.dag
    needrun = set(dag.needrun_jobs())
    waves: dict = defaultdict(list)  # (model, depth) -> jobs
    cfgs: dict = {}
    for job in needrun:
        if job.rule.name != rule:
            continue
        model = job.wildcards.model
        cfgs.setdefault(model, model_cfg(model))
        if get_backend(cfgs[model]["backend"]).shares_engine:
            waves[(model, depths[job])].append(job)
    if not waves:
        return {}
    builders = {}  # a requests file this run rebuilds -> the job that builds it
    for jobs in waves.values():
        for job in jobs:
            for dep, files in dag.dependencies[job].items():
                if dep in needrun and str(job.input.requests) in map(str, files):
                    builders[str(job.input.requests)] = {"input": [str(f) for f in dep.input]}
    estimate = RequestSets(cfgs, ".", builders)
    groups: dict = {}
    for (model, depth), jobs in sorted(waves.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        jobs.sort(key=lambda j: str(j.output[0]))
        counted = {job: _estimate(estimate, job, model) for job in jobs}
        machine = cfgs[model].get("resources") or {}
        shards = shard_wave(
            {job: c.max_new_tokens if c else None for job, c in counted.items()},
            generate_resources(cfgs[model])["runtime"],
            machine.get("tokens_per_s"),
        )
        for n, shard in enumerate(shards, 1):
            gid = f"{GROUP_PREFIX}{model}-w{depth}" + (f"-{n}" if len(shards) > 1 else "")
            for job in shard:
                job.group = gid
                groups[job] = gid
        if len(shards) > 1:
            log.info("%s: wave %d split into %d submissions", model, depth, len(shards))
    sizes = Counter(groups.values())
    settings = workflow.group_settings
    settings.group_components = {**dict(settings.group_components), **sizes}
    dag.update_groups()
    # Jobs ready when the run starts (a rerun's) were listed as ready on their own before this
    # hook: list them again, so that they go as their group.
    stale = [job for job in groups if job in dag.ready_jobs]
    if stale:
        dag.ready_jobs.difference_update(stale)
        dag.update_ready(stale)
    for job, gid in groups.items():
        group = dag.get_job_group(job)
        if group is not None and group.groupid == gid:
            # What one job of the model asks for (the layered sum would ask for a GPU per set).
            group._resources = {k: v for k, v in job.resources.items()}
    return groups


def _estimate(estimate, job, model) -> dict | None:
    """A set's token counts for the sharding decision; None (counted as empty) when its file
    cannot be read: the set's own job reports a bad file, an estimate never stops the run."""
    try:
        return estimate.count(job.wildcards.study, model, job.wildcards.requestset)
    except Exception as exc:  # noqa: BLE001
        log.warning("no token estimate for %s: %s", job.output[0], exc)
        return None


def write_plan(dag, path: str | os.PathLike = PLAN_PATH) -> dict:
    plan = generate_plan(dag)
    with atomic_write(path) as handle:
        handle.write(json.dumps(plan, indent=1) + "\n")
    return plan


def retire_plan(path: str | os.PathLike = PLAN_PATH, last=LAST_PLAN_PATH) -> None:
    with contextlib.suppress(FileNotFoundError):
        Path(path).replace(last)


@dataclasses.dataclass(frozen=True)
class Sibling:
    """Another request set of the same model in this run."""

    study: str
    requestset: str
    requests: Path
    requests_rebuilt: bool
    plan_created: float

    def ready(self) -> bool:
        """Its requests file is built (by this run, when the run rebuilds it)."""
        try:
            built = self.requests.stat().st_mtime
        except FileNotFoundError:
            return False
        return not self.requests_rebuilt or built >= self.plan_created - 1


def siblings(
    model: str, study: str, requestset: str, path: str | os.PathLike = PLAN_PATH
) -> list[Sibling]:
    """The model's other request sets of this run (none without a plan that lists this job:
    a run without hooks, or a job from another run)."""
    try:
        plan = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError):
        return []
    sets = (plan.get("models") or {}).get(model, {}).get("sets", [])
    own = [s for s in sets if s["study"] == study and s["requestset"] == requestset]
    if not own:
        return []
    if own[0].get("group"):  # on a cluster: only the sets of this job's own submission
        sets = [s for s in sets if s.get("group") == own[0]["group"]]
    return [
        Sibling(
            s["study"],
            s["requestset"],
            Path(s["requests"]),
            bool(s["requests_rebuilt"]),
            float(plan["created"]),
        )
        for s in sets
        if (s["study"], s["requestset"]) != (study, requestset)
    ]


def engine_lock(folder: str | os.PathLike):
    """Hold the model's engine lock (``.engine.lock`` in its cache folder): one job of a model
    loads its engine at a time; the others wait and then find their answers cached."""
    return held_lock(Path(folder) / ".engine.lock", "its engine")
