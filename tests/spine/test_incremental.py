"""Incremental reruns, measured with `snakemake -n` on a complete run of a small config.

The config is derived from config/config.yaml, keeping every study block as it is (so each study
is covered as soon as it is enabled there), with every model replaced by a `replay` model of the
same id reading a small folder: the ad-hoc request set gets real answers, every other request an
error row, which every study must count rather than crash on. Extra replay models play the
newcomer (`newbie`), a second evaluated model whose decoding changes (`peer`), and a new judge
(`judge2`).

What each case may rerun is checked job by job (rule and wildcards, from the dry run's listing):
per-model jobs carry the model in a wildcard (`model=`, or `{step}--{model}` request sets of
judge steps); jobs without one are shared (preparation, aggregates, report), and any rerun of a
shared upstream job would show up as reruns of the old models' jobs below it.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest
import yaml

from oncoeval.config import checks as oc
from tests.conftest import REPO, WORKFLOW_PARTS, run_snakemake, write_config

pytestmark = pytest.mark.slow

ADHOC_SET = "incr"
QUESTIONS = ["What is a tumour board?", "Name one radiation side effect.", "Define staging."]
NEW, PEER, NEW_JUDGE = "newbie", "peer", "judge2"


def replay_model(model_id: str, root: Path, **extra) -> dict:
    folder = root / "replay" / model_id
    (folder / "adhoc").mkdir(parents=True, exist_ok=True)
    (folder / "adhoc" / f"{ADHOC_SET}.jsonl").write_text(
        "".join(
            json.dumps({"request_id": f"q{i}", "text": f"{model_id} answer {i}"}) + "\n"
            for i in range(len(QUESTIONS))
        )
    )
    return {"id": model_id, "backend": "replay", "path": str(folder), **extra}


def referenced_ids(config: dict) -> list[str]:
    """Every model the config sends requests to, by any route (judges, verifier_for, ...)."""
    ids = list(config.get("evaluate") or [])
    ids += [route.model for route in oc.model_routes(config)]
    return list(dict.fromkeys(ids))


def add_evaluated(config: dict, model_id: str) -> None:
    """Evaluate one more model everywhere the config evaluates models."""
    config["evaluate"].append(model_id)
    for block in config["studies"].values():
        if block and block.get("enabled") and block.get("evaluate"):
            block["evaluate"].append(model_id)


def base_config(root: Path) -> dict:
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["models"] = [replay_model(mid, root) for mid in referenced_ids(config)]
    config["models"].append(replay_model(PEER, root))
    add_evaluated(config, PEER)
    requests = root / f"{ADHOC_SET}.jsonl"
    requests.write_text(
        "".join(
            json.dumps(
                {"request_id": f"q{i}", "messages": [{"role": "user", "content": q}], "params": {}}
            )
            + "\n"
            for i, q in enumerate(QUESTIONS)
        )
    )
    config["adhoc"] = {**(config.get("adhoc") or {}), ADHOC_SET: str(requests)}
    config["bootstrap"] = {**config.get("bootstrap", {}), "n_resamples": 200}
    return config


def studies_with_judges(config: dict) -> list[str]:
    return [s for s in oc.enabled_studies(config) if oc.study_judges(config, s)]


def planned_jobs(workdir: Path, config: dict, name: str) -> list[dict]:
    """Every job a dry run would run: rule, wildcards, outputs and reason."""
    cfg = write_config(workdir, config, name)
    proc = run_snakemake(workdir, "-n", configfile=cfg)
    jobs, job = [], None
    for line in (proc.stdout + proc.stderr).splitlines():
        if m := re.match(r"^(?:local)?(?:rule|checkpoint) (\w+):$", line):
            job = {"rule": m.group(1), "wildcards": {}, "output": [], "reason": ""}
            jobs.append(job)
        elif job is not None and (m := re.match(r"^\s+(\w+): (.*)$", line)):
            key, value = m.groups()
            if key == "wildcards":
                job["wildcards"] = dict(kv.split("=", 1) for kv in value.split(", "))
            elif key == "output":
                job["output"] = value.split(", ")
            elif key == "reason":
                job["reason"] = value
        elif not line.startswith(" "):
            job = None
    return [j for j in jobs if j["rule"] != "all"]


def describe(job: dict) -> str:
    return f"{job['rule']}({', '.join(f'{k}={v}' for k, v in job['wildcards'].items())})"


def concerns(job: dict, model_id: str) -> bool:
    """The job is part of this model's chain: its own, or a judge step on its responses."""
    wc = job["wildcards"]
    if wc.get("model") == model_id:
        return True
    return any(model_id in re.split(r"--|/", v) for k, v in wc.items() if k != "model")


def per_model(job: dict, models: list[str]) -> bool:
    wc = job["wildcards"]
    return wc.get("model") in models or any(
        m in re.split(r"--|/", v) for k, v in wc.items() if k != "model" for m in models
    )


@pytest.fixture(scope="module")
def complete_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("incremental")
    for part in WORKFLOW_PARTS:
        if part != "config" and (REPO / part).exists():
            (root / part).symlink_to(REPO / part)
    # A real copy of config/, so that the unrelated-edit case can touch files in it.
    shutil.copytree(REPO / "config", root / "config")
    config = base_config(root)
    write_config(root, config, "base.yaml")
    started = time.perf_counter()
    run_snakemake(root, configfile=root / "base.yaml", timeout=1500)
    print(f"complete run: {time.perf_counter() - started:.1f} s")
    return root, config


def test_complete_run_leaves_nothing_to_do(complete_run):
    root, config = complete_run
    assert planned_jobs(root, config, "same.yaml") == []


def test_adding_a_model_schedules_only_its_chain_and_the_aggregates(complete_run):
    root, config = complete_run
    new = copy.deepcopy(config)
    new["models"].append(replay_model(NEW, root))
    add_evaluated(new, NEW)
    jobs = planned_jobs(root, new, "add-model.yaml")
    old = [m["id"] for m in config["models"]]
    for job in jobs:
        assert concerns(job, NEW) or not per_model(job, old), (
            f"old model's job reruns: {describe(job)}"
        )
    generated = {
        (j["wildcards"]["study"], j["wildcards"]["requestset"])
        for j in jobs
        if j["rule"] == "generate" and j["wildcards"]["model"] == NEW
    }
    # The newcomer answers the ad-hoc set and every enabled study's requests ...
    assert ("adhoc", ADHOC_SET) in generated
    for study in oc.enabled_studies(new):
        assert any(s == study for s, _ in generated), f"{study}: no generate job for {NEW}"
    # ... and each study's judges read its responses, through their own generate jobs.
    for study in studies_with_judges(new):
        judges = set(oc.study_judges(new, study).values())
        assert any(
            j["rule"] == "generate" and j["wildcards"]["model"] in judges and concerns(j, NEW)
            for j in jobs
        ), f"{study}: no judge job on {NEW}'s responses"
    # No generate job of any old model, evaluated or judge, except judge steps on the newcomer.
    assert all(
        j["wildcards"]["model"] == NEW or concerns(j, NEW) for j in jobs if j["rule"] == "generate"
    )


def test_changing_one_models_decoding_reruns_only_its_chain(complete_run):
    root, config = complete_run
    changed = copy.deepcopy(config)
    peer = next(m for m in changed["models"] if m["id"] == PEER)
    peer["generation"] = {"temperature": 0.7, "top_p": 0.9}
    peer["max_new_tokens"] = 64
    jobs = planned_jobs(root, changed, "decoding.yaml")
    others = [m["id"] for m in config["models"] if m["id"] != PEER]
    for job in jobs:
        assert concerns(job, PEER) or not per_model(job, others), f"reruns: {describe(job)}"
    reruns = {
        j["wildcards"].get("study")
        for j in jobs
        if j["rule"] == "generate" and j["wildcards"]["model"] == PEER
    }
    assert {"adhoc", *oc.enabled_studies(changed)} <= reruns
    # Only the decoding settings changed: the rerun is because of the generate params.
    assert all(
        "Params have changed" in j["reason"]
        for j in jobs
        if j["rule"] == "generate" and j["wildcards"]["model"] == PEER
    )


def test_changing_a_judge_reruns_only_the_judge_and_its_readers(complete_run):
    root, config = complete_run
    studies = studies_with_judges(config)
    if not studies:
        pytest.skip("no enabled study has judges yet (only ad-hoc request sets are enabled)")
    for study in studies:
        changed = copy.deepcopy(config)
        changed["models"].append(replay_model(NEW_JUDGE, root))
        block = changed["studies"][study]
        block["judges"] = {role: NEW_JUDGE for role, mid in block["judges"].items() if mid}
        jobs = planned_jobs(root, changed, f"judge-{study}.yaml")
        assert jobs, f"{study}: a new judge reran nothing"
        rebuilt = {out for job in jobs for out in job["output"]}
        for job in jobs:
            if job["rule"] == "generate":
                assert job["wildcards"]["study"] == study, describe(job)
                # Only the new judge's calls, and calls whose requests are built from what the
                # judge writes (CancerGUIDE's synthetic notes come from its generator judge, and
                # every model then predicts paths on them). An evaluated model never answers
                # unchanged requests again.
                wc = job["wildcards"]
                requests = f"results/{wc['study']}/requests/{wc['requestset']}.jsonl"
                assert wc["model"] == NEW_JUDGE or requests in rebuilt, describe(job)
            # Nothing of another study reruns.
            other = [s for s in oc.enabled_studies(config) if s != study]
            assert not any(f"results/{s}/" in out for out in job["output"] for s in other)
        assert any(j["rule"] == "generate" for j in jobs)


def test_unrelated_edits_and_a_reformatted_config_rerun_nothing(complete_run):
    root, config = complete_run
    later = time.time() + 5
    unrelated = [root / "config" / "README.md", root / "notes.txt", root / "base.yaml"]
    (root / "notes.txt").write_text("scratch\n")
    for path in unrelated:
        os.utime(path, (later, later))
    assert planned_jobs(root, config, "base.yaml") == []
    # The same config in another YAML layout: flow style, other key order, comments.
    reformatted = root / "reformatted.yaml"
    text = yaml.safe_dump(dict(reversed(list(config.items()))), default_flow_style=True, width=60)
    reformatted.write_text("# same settings, other layout\n" + text)
    proc = run_snakemake(root, "-n", configfile=reformatted)
    assert "Nothing to be done" in proc.stdout + proc.stderr
