"""Names and pages are safe (issue #36, item 7): only declared inputs are hashed, and a config's
strings reach the report's scripts as text."""

from __future__ import annotations

import json
from pathlib import Path

from snakemake import logging as smk_logging

from oncoeval.export import run
from oncoeval.report.provenance import input_files
from oncoeval.workflow import dag as run_wf

REPO = Path(__file__).resolve().parents[2]


def test_a_model_id_naming_a_folder_hashes_nothing_of_it():
    """`resources` is a folder of the checkout: as a model id (evaluated and a judge) it is no
    input, and the run's inputs are those of the demo config alone."""
    config = run.load_config(REPO, [])
    before = input_files(config, REPO)
    config["models"].append({"id": "resources", "backend": "openai", "model": "resources"})
    config["evaluate"] = ["resources"]
    config["studies"]["side_effects"]["evaluate"] = ["resources"]
    config["studies"]["cancer_myth"]["judges"]["verifier"] = "resources"
    assert input_files(config, REPO) == before
    assert any(p.startswith("resources/demo/") for p in before)


def test_a_script_end_tag_in_a_model_string_stays_text_in_the_reports_params():
    """Snakemake's report embeds a report job's params as JSON inside <script> without escaping
    them (report_provenance's are the model signatures): rendered as it renders them, no
    `</script>` or tag of the config's string is left, and the signature reads back whole."""
    hostile = "gpt-4</script><img src=x onerror=alert(1)>&amp;"
    config = run.load_config(REPO, [])
    config["models"].append({"id": "hostile", "backend": "openai", "model": hostile})
    config["studies"]["side_effects"]["evaluate"] = ["hostile"]
    params = {"models": run_wf.model_signatures(config), "scope": None}
    formatted = smk_logging.format_dict(params).replace("\n", r"\n").replace('"', r"\"")
    embedded = json.dumps({"results/report/provenance.html": {"params": formatted}})
    assert "</script" not in embedded.lower() and "<img" not in embedded
    assert json.loads(params["models"]["hostile"])["model"] == hostile
