"""``verifier_for``: an evaluated id whose answers are judged by a verifier of its own (the demo's
replayed reference answers by their stored verdicts), routed, checked, and left uncorrected."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from oncoeval.config import checks as oc
from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.studies.cancer_myth import metrics
from oncoeval.studies.cancer_myth import workflow as cancer_myth_wf

REPO = Path(__file__).resolve().parents[2]
SETTINGS = BootstrapSettings(n_resamples=200, ci=0.95, seed=0)
BLOCK = {"verifier_for": {"reference": "stored-verdicts"}}


def test_a_model_named_in_verifier_for_is_judged_by_its_own_verifier():
    assert cancer_myth_wf.jury_for(BLOCK, ["judge"], "reference") == ["stored-verdicts"]
    assert cancer_myth_wf.jury_for(BLOCK, ["a", "b"], "model") == ["a", "b"]  # the study's jury
    assert cancer_myth_wf.answer_verdict_files(BLOCK, ["a", "b"], "reference") == {
        "first": [cancer_myth_wf.paths.responses("stored-verdicts", "verify--reference")],
        "retry": [cancer_myth_wf.paths.responses("stored-verdicts", "verify-retry--reference")],
    }
    # Retry sets quote the reply of whoever answered the first set.
    assert (
        cancer_myth_wf.verifier_of_set(BLOCK, "judge", "verify", "--reference") == "stored-verdicts"
    )
    assert cancer_myth_wf.verifier_of_set(BLOCK, "judge", "verify", "--model") == "judge"
    assert cancer_myth_wf.verifier_of_set(BLOCK, "judge", "validate", "") == "judge"


def test_the_demo_routes_its_reference_answers_to_their_stored_verdicts():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    routes = {(r.study, r.model): r.key for r in oc.model_routes(config)}
    verdicts = ("cancer_myth", "cancer-myth-reference-verdicts")
    assert routes[verdicts] == "studies.cancer_myth.verifier_for"
    assert ("cancer_myth", "cancer-myth-reference-replay") in routes
    assert routes[("cancer_myth", "smollm2")]  # SmolLM2 answers and verifies its own answers


def test_a_verifier_for_key_that_names_no_model_is_a_config_problem():
    demo = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    replays = [m for m in demo["models"] if m["id"].startswith("cancer-myth-reference")]
    block = {
        "enabled": True,
        "evaluate": ["cancer-myth-reference-replay"],
        "judges": {"verifier": "cancer-myth-reference-verdicts"},
        "questions": str(REPO / demo["studies"]["cancer_myth"]["questions"]),
        "verifier_examples": str(REPO / demo["studies"]["cancer_myth"]["verifier_examples"]),
        "verifier_for": {"typo-replay": "cancer-myth-reference-verdicts"},
    }
    models = [{**m, "path": str(REPO / m["path"])} for m in replays]
    problems = oc.config_problems({"models": models, "studies": {"cancer_myth": block}})
    assert problems == [
        "studies.cancer_myth.verifier_for: unknown model id 'typo-replay'; defined: "
        "['cancer-myth-reference-replay', 'cancer-myth-reference-verdicts']"
    ]


def test_a_row_judged_by_its_own_verifier_is_not_corrected_by_the_study_verifiers_validation():
    # A validation set where the study verifier agrees with the humans on 6 items per class.
    human = np.repeat([-1, 0, 1], 6)
    validation = (human, human.copy())
    scores = {
        "model": pd.DataFrame({"score": [1, 0, -1, -1]}),  # PCS (1 + 0 - 1 - 1) / 4
        "reference": pd.DataFrame({"score": [1, 1, 1, 1]}),
    }
    table = metrics.overall_table(
        scores, SETTINGS, validation=validation, own_verifier={"reference": "stored-verdicts"}
    ).set_index("model")
    # A perfect verifier leaves the model's rate as it was.
    assert float(table.loc["model", "pcs_corrected"]) == pytest.approx(-0.25)
    assert table.loc["reference", "pcs"] == 1.0
    reason = "judged by stored-verdicts, not the validated verifier"
    assert table.loc["reference", "pcs_corrected"] == reason
    assert table.loc["reference", "pcr_corrected"] == reason
    assert pd.isna(table.loc["reference", "pcs_corrected_ci_low"])
