"""The default config runs the side_effects study end to end on the embedded SmolLM2."""

import pandas as pd
import pytest
import yaml

from tests.conftest import REPO, run_snakemake, write_config

SE = "results/side_effects"


@pytest.mark.slow
@pytest.mark.timeout(3000)  # 48 SmolLM2 requests: minutes on idle cores, far more on busy ones
def test_default_config_runs_the_study_on_the_embedded_model(workdir):
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    assert config["studies"]["side_effects"]["enabled"] is True
    for study in config["studies"]:
        if study != "side_effects":  # the other studies have their own tests
            config["studies"][study]["enabled"] = False
    run_snakemake(workdir, configfile=write_config(workdir, config), timeout=1500)

    scores = pd.read_csv(workdir / SE / "scores/smollm2.tsv", sep="\t")
    assert len(scores) == 6 * 2 * 4
    assert set(scores.status) <= {"ok", "empty"}
    assert scores.precision.between(0, 1).all()
    bench = pd.read_csv(workdir / "benchmarks/side_effects/generate/smollm2/lists.tsv", sep="\t")
    responses = pd.read_json(workdir / SE / "responses/smollm2/lists.jsonl", lines=True)
    assert responses.completion_tokens.sum() <= 8000  # the study's share of the demo budget
    print(f"generate: {bench.s.iloc[0]:.0f} s wall, {responses.completion_tokens.sum()} new tokens")
    for i in range(1, 8):
        assert (workdir / SE / f"tables/table{i}.tsv").exists()
