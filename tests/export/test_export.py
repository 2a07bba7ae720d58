"""`make export` and `make publish` over a real workflow run (replayed answers, no model):
inspect eval logs that read back sample for sample, Every Eval Ever records its own validator
accepts, the reporting checklist, a Workflow Run RO-Crate that rocrate-validator accepts at the
REQUIRED level, and no PHI text in any of them unless report.include_phi_text is on.

CORAL is marked contains_phi, and one of its notes carries a planted marker; Cancer-Myth is not,
and its per-item scores, verdicts and reasons are checked against the run's own tables. The
validators run in the tools environment (`make tools`, docs/publishing.md).
"""

from __future__ import annotations

import copy
import json
import math
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO, link_workflow, run_snakemake, workflow_env, write_config
from helpers import replayed
from inspect_ai.log import read_eval_log
from live_page import browse

from oncoeval.core.format import finite
from oncoeval.export import checklist, crate, run
from oncoeval.export.items import place_in_units, study_items, unit_clusters
from oncoeval.export.phi import redactor_for
from oncoeval.report.provenance import provenance

MARKER = "ZQXPHIMARKER7731"
TOOLS = REPO / ".venv-tools"
REPLAYED = REPO / "resources" / "demo" / "coral" / "replay" / "reference" / "coral"
CONFIG = replayed("cancer_myth", "coral", coral={"contains_phi": True, "notes_dir": "phi-notes"})


def _tool(*parts: str) -> Path:
    path = TOOLS.joinpath(*parts)
    if not path.exists():
        pytest.fail(f"{path} is missing: build the validators with `make tools`")
    return path


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """The replayed run, then `make export` and `make publish` with the switch off, and the same
    with report.include_phi_text on into folders of their own."""
    workdir = link_workflow(tmp_path_factory.mktemp("export-run"))
    notes = workdir / "phi-notes"
    shutil.copytree(REPO / "resources" / "demo" / "coral" / "notes", notes)
    note = notes / "breast_01.txt"
    # Appended to the last section's last paragraph: the annotations' offsets stay valid.
    note.write_text(note.read_text().rstrip("\n") + f" Seen with {MARKER}.\n")
    # The replayed answers, one of them quoting the marker and ending in a line that is no
    # tuple of its kind (a parse failure: an unscored reason to carry).
    answers = workdir / "phi-replay" / "coral" / "extraction.jsonl"
    answers.parent.mkdir(parents=True)
    rows = [json.loads(line) for line in (REPLAYED / "extraction.jsonl").read_text().splitlines()]
    rows[0]["text"] += (
        f"\nSymptomEnt(Symptom='{MARKER}', Datetime={{'unknown'}})\nSymptomEnt(Bogus='x')"
    )
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    models = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["models"]
    models = [
        {**m, "path": "phi-replay"} if m["id"] == "coral-reference-replay" else m for m in models
    ]
    configfile = write_config(workdir, {**CONFIG, "models": models})
    run_snakemake(workdir, configfile=configfile)
    # `make publish` (export, checklist, crate) as the Makefile runs it.
    subprocess.run(
        [sys.executable, "-m", "oncoeval.export", "publish", f"--configfile={configfile.name}"],
        cwd=workdir, env=workflow_env(), check=True, timeout=600,
    )  # fmt: skip
    config = run.load_config(workdir, [str(configfile)])
    on = copy.deepcopy(config)
    on["report"] = {**on["report"], "include_phi_text": True}
    run.export(workdir, on, out=workdir / "on" / "export", checklist_dir=workdir / "on")
    crate.build(workdir, on, ["config/config.yaml", configfile.name], workdir / "on" / "crate")
    return workdir, config


def _eval_logs(root: Path) -> dict[tuple[str, str], Path]:
    return {(p.parent.name, p.stem): p for p in sorted(root.glob("inspect/*/*.eval"))}


@pytest.mark.slow
def test_the_marker_is_in_the_phi_inputs_the_run_read(run_dir):
    workdir, _ = run_dir
    coral = workdir / "results" / "coral"
    # In the notes the model read and in its answers: else the PHI checks would pass for nothing.
    assert MARKER in (coral / "requests" / "extraction.jsonl").read_text()
    assert (
        MARKER in (coral / "responses" / "coral-reference-replay" / "extraction.jsonl").read_text()
    )


@pytest.mark.slow
def test_inspect_logs_read_back_every_sample_with_its_scores_and_verdicts(run_dir):
    workdir, config = run_dir
    logs = _eval_logs(workdir / "results" / "export")
    assert set(logs) == {
        ("cancer_myth", "cancer-myth-reference-replay"),
        ("coral", "coral-reference-replay"),
    }
    for (study, model), path in logs.items():
        log = read_eval_log(str(path))
        source = study_items(workdir, study, model, redactor_for(config, study))
        place_in_units(source, unit_clusters(workdir, config, study, model))
        responses = (workdir / "results" / study / "responses" / model).glob("*.jsonl")
        assert len(source) == sum(len(p.read_text().splitlines()) for p in responses)
        samples = {s.id: s for s in log.samples}
        assert sorted(samples) == sorted(i.id for i in source)
        for item in source:
            sample = samples[item.id]
            # Finite scores only, each with the model's answer (inspect view's answer column).
            scored = {k: v for k, v in item.scores.items() if finite(v) is not None}
            assert {k: v.value for k, v in (sample.scores or {}).items()} == scored
            assert all(v.answer == (item.output or "") for v in (sample.scores or {}).values())
            assert sample.metadata["judge"] == item.verdicts
            assert sample.metadata["unscored_reason"] == (item.unscored or None)
            assert sample.metadata["request_fields"] == item.meta
            assert (sample.metadata["unit"], sample.metadata["cluster"]) == (
                item.unit,
                item.cluster,
            )
            assert sample.output.completion == (item.output or "")
        # Every scored item counts towards a resampling unit; the broken answer is unscored.
        assert all(i.unit for i in source if i.scores)
        assert study != "coral" or any("parse_failures=" in i.unscored for i in source)
        measures = log.results.scores[0].metrics
        summary = pd.read_csv(workdir / "results" / "summary.tsv", sep="\t")
        rows = summary[(summary["study"] == study) & (summary["model"] == model)]
        valued = pd.to_numeric(rows["value"], errors="coerce").notna()
        assert set(measures) == set(rows[valued]["measure"])
        assert all(math.isfinite(m.value) for m in measures.values())
        assert set(log.eval.metadata["headlines_without_value"]) == set(rows[~valued]["measure"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_inspect_view_lists_the_logs_and_shows_a_sample_with_its_score(run_dir):
    """`inspect view --log-dir results/export/inspect` (docs/publishing.md), read in headless
    Chromium: the log list names both exported logs; opening Cancer-Myth's log lists its
    samples; opening a sample shows its id, its question and its score. The viewer fetches
    nothing but its own server (its assets are in the inspect-ai wheel)."""
    workdir, _ = run_dir
    path = _eval_logs(workdir / "results" / "export")[
        ("cancer_myth", "cancer-myth-reference-replay")]  # fmt: skip
    samples = {s.id: s for s in read_eval_log(str(path)).samples}
    port = _free_port()
    origin = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("inspect")), "view", "--log-dir",
         "results/export/inspect", "--host", "127.0.0.1", "--port", str(port)],
        cwd=workdir, env=workflow_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, server.stdout.read()
            try:
                with urllib.request.urlopen(origin + "/", timeout=5) as r:
                    assert r.status == 200
                    break
            except OSError:
                assert time.monotonic() < deadline, "inspect view did not answer in 120 s"
                time.sleep(0.5)

        async def steps(page):
            # The log list: one row per exported log, by task and model.
            listing = await page.wait_for(r"coral-reference-replay", timeout=90)
            assert "cancer-myth-reference-replay" in listing
            assert "oncoeval/cancer_myth" in listing and "oncoeval/coral" in listing
            await _click(page, "cancer-myth-reference-replay")
            ids = "|".join(re.escape(str(i)) for i in samples)
            text = await page.wait_for(ids, timeout=90)
            shown = [i for i in samples if str(i) in text.split()]
            assert shown, text[:2000]
            sample = samples[shown[0]]
            await _click(page, str(sample.id))
            detail = await page.wait_for(f"Sample {sample.id} ", timeout=90)
            return sample, detail, list(page.requested)

        sample, detail, requested = browse(origin + "/", steps)
    finally:
        server.terminate()
        server.wait(timeout=30)
    question = sample.input if isinstance(sample.input, str) else sample.input[-1].text
    assert question.strip()[:60] in detail
    assert sample.output.completion.strip()[:60] in detail
    score = sample.scores["score"].value
    assert f"SCORE\n{score:g}\n" in detail, detail[:2000]
    outside = [u for u in requested if not u.startswith((origin + "/", "data:"))]
    assert outside == [] and any("/api/" in u for u in requested)


async def _click(page, text: str):
    """Click the innermost element whose whole text is ``text``."""
    found = await page.evaluate(
        "(() => { const el = Array.from(document.querySelectorAll('body *')).find("
        f"e => e.children.length === 0 && e.textContent.trim() === {json.dumps(text)});"
        " if (!el) { return false; } el.click(); return true; })()"
    )
    assert found, f"nothing on the page reads {text!r}: {(await page.text())[:2000]}"


@pytest.mark.slow
def test_inspect_scores_and_verdicts_are_the_study_tables(run_dir):
    """Cancer-Myth's per-question scores and judge reasons, read from the log, are the rows of
    its scores table (the question id is the request id)."""
    workdir, _ = run_dir
    log = read_eval_log(str(_eval_logs(workdir / "results" / "export")[
        ("cancer_myth", "cancer-myth-reference-replay")]))  # fmt: skip
    scores = pd.read_csv(
        workdir / "results" / "cancer_myth" / "scores" / "cancer-myth-reference-replay.tsv",
        sep="\t",
    ).set_index("question_id")
    answers = [s for s in log.samples if s.metadata["request_set"] == "answer"]
    assert len(answers) == len(scores) == 21
    for sample in answers:
        row = scores.loc[int(sample.metadata["request_id"])]
        assert sample.scores["score"].value == row["score"]
        assert sample.metadata["judge"]["scores:reason"] == row["reason"]
        assert sample.metadata["resampling_unit"].startswith("question")
        assert sample.metadata["unit"] == sample.metadata["request_id"]
        assert sample.metadata["cluster"] == str(row.get("cluster", row.name))


@pytest.mark.slow
def test_every_eval_ever_validator_accepts_the_records(run_dir):
    workdir, _ = run_dir
    root = workdir / "results" / "export" / "eee"
    aggregates = sorted(root.glob("data/*/*/*/*.json"))
    assert len(aggregates) == 2
    proc = subprocess.run(
        [str(_tool("eee", "bin", "python")), "-m", "every_eval_ever.validate", "--format",
         "json", "data/*/*/*/*.json", "data/*/*/*/*.jsonl"],
        cwd=root, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    report = json.loads(proc.stdout)
    assert len(report) == 4, proc.stderr
    assert [e for f in report for e in f["errors"]] == []
    assert proc.returncode == 0
    for path in aggregates:
        record = json.loads(path.read_text())
        rows = (root / record["detailed_evaluation_results"]["file_path"]).read_text()
        assert len(rows.splitlines()) == record["detailed_evaluation_results"]["total_rows"] > 0
        assert record["evaluation_results"], path


@pytest.mark.slow
def test_checklist_fills_the_items_the_run_answers(run_dir):
    workdir, _ = run_dir
    md = (workdir / "results" / "reporting_checklist.md").read_text()
    rows = [
        line.split(" | ") for line in md.splitlines() if line.startswith("| ") and " | " in line
    ]
    rows = [r for r in rows[2:]]  # header and rule
    status = {f"{r[0][2:]} {r[1]}": r[3] for r in rows}
    answer = {f"{r[0][2:]} {r[1]}": r[4] for r in rows}
    # Every item of the three guidelines, once.
    assert len(status) == len(rows) and {k.split()[0] for k in status} == {
        "TRIPOD-LLM", "CHART", "MI-CLEAR-LLM"
    }  # fmt: skip
    # MI-CLEAR-LLM 1 (the LLM used, with the query dates): the replay run knows when its
    # answers were written but not when they were first asked.
    assert status["MI-CLEAR-LLM 1"] == checklist.PARTLY
    assert "coral-reference-replay: 20" in answer["MI-CLEAR-LLM 1"]  # its query dates
    # TRIPOD-LLM 7b (agreement of the metrics with human evaluation) and CHART 7 (performance
    # evaluation): Cancer-Myth is judged by its stored verdicts and given no human labels
    # (human_scores: null), so its judge is not validated and the items are partly filled.
    assert status["TRIPOD-LLM 7b"] == status["CHART 7"] == checklist.PARTLY
    # TRIPOD-LLM 7d (human assessors): CORAL's expert review is there, who the experts were is
    # for the authors.
    assert status["TRIPOD-LLM 7d"] == checklist.PARTLY
    # TRIPOD-LLM 14e (data availability): CORAL is marked contains_phi and this export leaves
    # its text out.
    assert "Studies marked contains_phi: coral" in md and "include_phi_text is off" in md
    # CORAL's expert review of the answers is named as such.
    assert "Human review of answers: results/coral/tables/expert_review.tsv" in md
    # Prompt templates are named with their hashes.
    assert "config/prompts/coral/" in md and "config/prompts/cancer_myth/" in md
    html = (workdir / "results" / "reporting_checklist.html").read_text()
    assert html.count("<tr class=") == len(rows)


def test_checklist_of_a_paper_config_before_its_run(tmp_path):
    """A paper config with nothing run yet: what the config and provenance answer is filled,
    the query dates are for the authors."""
    workdir = link_workflow(tmp_path)
    config = run.load_config(workdir, ["config/paper/cancer_myth.yaml"])
    models = {m["id"]: m for m in config["models"]}
    prov = provenance(config, models, workdir)
    items = checklist.entries(checklist.RunFacts(workdir, config, prov))
    by_id = {f"{e.guideline} {e.item}": e for e in items}
    # MI-CLEAR-LLM 1 (the LLM used and its query dates): nothing was queried yet.
    assert "no responses in results/ yet" in by_id["MI-CLEAR-LLM 1"].answer
    # MI-CLEAR-LLM 3 (prompt wording) and TRIPOD-LLM 6c (inference settings) come from the
    # config; MI-CLEAR-LLM 5 (prompt testing and optimization) is the authors'.
    assert by_id["MI-CLEAR-LLM 3"].status == by_id["TRIPOD-LLM 6c"].status == checklist.FILLED
    assert by_id["MI-CLEAR-LLM 5"].status == checklist.AUTHORS
    # What the config and provenance answer in full: decoding and prompts (TRIPOD-LLM 6c,
    # MI-CLEAR-LLM 2-4), the comparison and analysis methods (TRIPOD-LLM 7e, CHART 9a), the
    # code (TRIPOD-LLM 14f).
    filled = {k for k, e in by_id.items() if e.status == checklist.FILLED}
    assert {
        "TRIPOD-LLM 6c", "TRIPOD-LLM 7e", "TRIPOD-LLM 14f", "CHART 9a",
        "MI-CLEAR-LLM 2", "MI-CLEAR-LLM 3", "MI-CLEAR-LLM 4",
    } <= filled  # fmt: skip
    counts = checklist.counts(items)
    assert sum(counts.values()) == len(items) and counts[checklist.FILLED] == len(filled)


@pytest.mark.slow
def test_crate_passes_rocrate_validator_at_the_required_level(run_dir, tmp_path):
    workdir, _ = run_dir
    folder = workdir / "results" / "publish" / "crate"
    metadata = json.loads((folder / "ro-crate-metadata.json").read_text())
    ids = {e["@id"] for e in metadata["@graph"]}
    assert {"Snakefile", "results/provenance.json", "results/reporting_checklist.md"} <= ids
    assert "test-config.yaml" in ids and "LICENSE" in ids and "CITATION.cff" in ids
    out = tmp_path / "validation.json"
    proc = subprocess.run(
        [str(_tool("crate", "bin", "rocrate-validator")), "--no-interactive", "validate",
         "--offline", "--cache-path", str(_tool("rocrate-cache") / "http_cache"),
         "-p", "workflow-run-crate", "-l", "required", "--output-format", "json",
         "--output-file", str(out), str(folder)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    result = json.loads(out.read_text())
    assert result["issues"] == [] and result["skipped_checks"] == 0, proc.stdout[-3000:]
    assert result["passed"] is True and proc.returncode == 0


def test_citation_cff_is_valid():
    proc = subprocess.run(
        [str(_tool("crate", "bin", "cffconvert")), "--validate", "-i", str(REPO / "CITATION.cff")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "valid" in proc.stdout
    version = yaml.safe_load((REPO / "CITATION.cff").read_text())["version"]
    assert version == run._library_version() or run._library_version() == "unknown"
    assert f"## {version}" in (REPO / "CHANGELOG.md").read_text()


def _texts(paths) -> dict[str, str]:
    """Every exported file as text: .eval logs through inspect's reader (their members are
    Zstandard-compressed), zips member by member, the rest as they are."""
    out = {}
    for path in paths:
        if path.suffix == ".eval":
            out[str(path)] = read_eval_log(str(path)).model_dump_json()
        elif path.suffix == ".zip":
            with zipfile.ZipFile(path) as z:
                for name in z.namelist():
                    out[f"{path}!{name}"] = z.read(name).decode("utf-8", "replace")
        else:
            out[str(path)] = path.read_bytes().decode("utf-8", "replace")
    return out


def _files(*roots: Path) -> list[Path]:
    return [p for r in roots for p in ([r] if r.is_file() else sorted(r.rglob("*"))) if p.is_file()]


@pytest.mark.slow
def test_no_phi_text_in_any_export_checklist_or_crate(run_dir):
    workdir, _ = run_dir
    results = workdir / "results"
    exported = _files(
        results / "export", results / "publish",
        results / "reporting_checklist.md", results / "reporting_checklist.html",
    )  # fmt: skip
    texts = _texts(exported)
    assert any(p.endswith(".eval") for p in texts) and any("!" in p for p in texts)
    assert [p for p, text in texts.items() if MARKER in text] == []
    # The PHI study's samples are in the log, as hashes.
    log = read_eval_log(
        str(results / "export" / "inspect" / "coral" / "coral-reference-replay.eval")
    )
    assert log.eval.metadata["phi_redacted"] is True
    assert all(s.output.completion.startswith("sha256:") for s in log.samples)


@pytest.mark.slow
def test_with_include_phi_text_the_marker_is_exported(run_dir):
    workdir, _ = run_dir
    on = workdir / "on"
    texts = _texts(_files(on))
    found = {Path(p.split("!")[0]).suffix for p, text in texts.items() if MARKER in text}
    assert {".eval", ".jsonl"} <= found  # the inspect log and the EEE instance rows
    assert any("crate" in p and MARKER in t for p, t in texts.items())
