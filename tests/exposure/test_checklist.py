"""TRIPOD-LLM 6a and MI-CLEAR-LLM 6 filled from the models' training cutoffs, the dataset's
release date and the exposure audit's table."""

import pandas as pd

from oncoeval.export import checklist, run
from oncoeval.exposure import audit
from oncoeval.report.provenance import provenance
from tests.conftest import link_workflow


def _entries(workdir, cutoff: bool, audited: bool):
    config = run.load_config(workdir, ["config/paper/cancer_myth.yaml"])
    config["studies"]["cancer_myth"]["evaluate"] = []  # the paper's models, not the demo's
    if cutoff:
        for m in config["models"]:
            m["training_cutoff"] = "2023-10"
    if audited:
        rows = pd.DataFrame(
            [{"item_id": str(i), "probe": "completion", "score": 0.1, "control_score": 0.2}
             for i in range(20)],
            columns=audit.ITEM_COLUMNS,
        )  # fmt: skip
        out = workdir / "results/cancer_myth/tables"
        out.mkdir(parents=True, exist_ok=True)
        not_run = {"gpt-4o": {"likelihood": "no log-probabilities (openai)"}}
        audit.exposure_table({"gpt-4o": rows}, ["completion", "likelihood"], not_run).to_csv(
            out / "exposure.tsv", sep="\t", index=False
        )
    prov = provenance(config, {m["id"]: m for m in config["models"]}, workdir)
    items = checklist.entries(checklist.RunFacts(workdir, config, prov))
    return {f"{e.guideline} {e.item}": e for e in items}


def test_cutoffs_and_audit_fill_the_two_items(tmp_path):
    workdir = link_workflow(tmp_path)
    before = _entries(workdir, cutoff=False, audited=False)
    assert before["TRIPOD-LLM 6a"].status == checklist.PARTLY
    assert "gpt-4o: not stated (training_cutoff unset)" in before["TRIPOD-LLM 6a"].answer
    assert before["MI-CLEAR-LLM 6"].status == checklist.PARTLY
    assert "not run (exposure.enabled is off)" in before["MI-CLEAR-LLM 6"].answer

    after = _entries(workdir, cutoff=True, audited=True)
    assert after["TRIPOD-LLM 6a"].status == checklist.FILLED
    assert "gpt-4o: 2023-10" in after["TRIPOD-LLM 6a"].answer
    answer = after["MI-CLEAR-LLM 6"].answer
    assert after["MI-CLEAR-LLM 6"].status == checklist.FILLED
    assert "cancer_myth: 2025-04" in answer
    assert "cancer_myth gpt-4o completion: no evidence (0/20 items" in answer
    assert "likelihood: not testable (no log-probabilities (openai))" in answer


def test_training_cutoff_is_a_date_and_stays_out_of_the_cache_key():
    from oncoeval.backends import get_backend
    from oncoeval.config import checks as oc

    entry = {"id": "r", "backend": "replay", "path": "x"}
    dated = entry | {"training_cutoff": "2023-10"}
    backend = get_backend("replay")
    assert backend.identity(dated) == backend.identity(entry)
    assert oc.schema_problems({"models": [dated]}) == []
    bad = oc.schema_problems({"models": [entry | {"training_cutoff": "October 2023"}]})
    assert any("training_cutoff" in p for p in bad)


def test_provenance_records_the_cutoffs_and_the_release_dates(tmp_path):
    workdir = link_workflow(tmp_path)
    config = run.load_config(workdir, ["config/paper/cancer_myth.yaml"])
    models = {m["id"]: m | {"training_cutoff": "2023-10"} for m in config["models"]}
    prov = provenance(config, models, workdir)
    assert prov["models"]["gpt-4o"]["training_cutoff"] == "2023-10"
    assert prov["datasets_released"] == {"cancer_myth": "2025-04 (Zhu et al., Cancer-Myth)"}
