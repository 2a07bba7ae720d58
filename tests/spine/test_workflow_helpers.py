"""The helpers the rules call while Snakemake builds the DAG (oncoeval.workflow.dag and
oncoeval.workflow.report), on small configs filled as rules/common.smk fills them."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from conftest import REPO, STUDIES
from snakemake.settings.types import ResourceSettings

from oncoeval.config import checks as oc
from oncoeval.core.errors import ConfigError
from oncoeval.report import catalog
from oncoeval.report import phi as report_phi
from oncoeval.studies import contract
from oncoeval.workflow import dag as run_wf
from oncoeval.workflow import report as report_targets

FIRST, *OTHERS = STUDIES

MODELS = [
    {"id": "a", "backend": "replay", "path": "answers/a"},
    {"id": "b", "backend": "replay", "path": "answers/b"},
    {"id": "gpu", "backend": "vllm", "path": "/models/x", "resources": {"gpu": 1, "mem_mb": 9000}},
]


def filled(**top) -> dict:
    """A config with only the first registered study enabled (models a and b), filled as the
    workflow fills it; ``top`` replaces top-level keys, ``first`` the first study's block."""
    first = top.pop("first", {})
    config = {
        "models": MODELS,
        "evaluate": ["a", "b"],
        "studies": {
            FIRST: {"enabled": True, **first},
            **{s: {"enabled": False} for s in OTHERS},
        },
        **top,
    }
    assert oc.schema_problems(config) == []
    return oc.fill_workflow_config(config)


def test_only_enabled_studies_are_evaluated():
    config = filled()
    assert run_wf.study_enabled(config, FIRST)
    assert not any(run_wf.study_enabled(config, s) for s in OTHERS)


def test_a_study_evaluates_its_own_list_else_the_global_one():
    assert run_wf.evaluated_models(filled(), FIRST) == ["a", "b"]
    assert run_wf.evaluated_models(filled(first={"evaluate": ["b"]}), FIRST) == ["b"]


def test_final_targets_are_each_enabled_studys_outputs_tables_then_adhoc_sets():
    config = filled(adhoc={"trial": "trial.jsonl", "more": "more.jsonl"})
    own = contract.final_targets(FIRST, oc.study_block(config, FIRST), ["a", "b"])
    assert own and all(Path(t).parts[1] == FIRST for t in own)
    assert run_wf.final_targets(config) == [
        *own,
        f"results/{FIRST}/tables/model_calls.tsv",
        f"results/{FIRST}/tables/model_comparison.tsv",
        f"results/{FIRST}/tables/leaderboard.tsv",
        # every evaluated model answers every ad-hoc set
        "results/adhoc/responses/a/trial.jsonl",
        "results/adhoc/responses/a/more.jsonl",
        "results/adhoc/responses/b/trial.jsonl",
        "results/adhoc/responses/b/more.jsonl",
    ]
    # A disabled study adds nothing, however its block is written.
    assert not any(f"results/{s}/" in t for s in OTHERS for t in run_wf.final_targets(config))


def test_a_generate_job_gets_its_model_only_on_a_checked_route():
    config = filled()
    routes = {(r.study, r.model) for r in oc.model_routes(config)}
    model = run_wf.routed_model_cfg(config, SimpleNamespace(study=FIRST, model="a"), routes)
    assert model["id"] == "a" and model["phi_safe"] is True  # a replay's default, filled
    with pytest.raises(ConfigError, match=f"no config key sends study {FIRST!r} to model 'gpu'"):
        run_wf.routed_model_cfg(config, SimpleNamespace(study=FIRST, model="gpu"), routes)


def test_generate_resources_come_from_the_model_then_the_default_then_the_profile():
    config = filled()
    workflow = SimpleNamespace(
        resource_settings=ResourceSettings(default_resources={"slurm_partition": "short"})
    )

    def resource(model, key, default=None):
        return run_wf.generate_resource(
            config, workflow, SimpleNamespace(model=model), key, default
        )

    assert (resource("gpu", "gpu", 0), resource("gpu", "mem_mb")) == (1, 9000)
    assert resource("a", "gpu", 0) == 0  # a replay asks for no GPU: the rule's default
    assert resource("gpu", "slurm_partition") == "short"  # unset: the profile's
    assert resource("gpu", "constraint") is None  # set nowhere
    bare = SimpleNamespace(resource_settings=ResourceSettings())
    assert run_wf.profile_default_resource(bare, "slurm_partition") is None


def test_a_comparison_reads_every_evaluated_models_scores_and_the_studys_own_inputs():
    config = filled()
    module = contract.study(FIRST)
    inputs = run_wf.comparison_inputs(config, FIRST)
    assert inputs["scores"] == [module.paths.scores("a"), module.paths.scores("b")]
    assert {k: v for k, v in inputs.items() if k != "scores"} == module.comparison_inputs(config)
    assert isinstance(run_wf.comparison_params(config, FIRST), dict)


def test_item_pages_add_a_compare_page_only_for_two_models():
    two, one = filled(), filled(first={"evaluate": ["a"]})
    assert report_targets.item_pages(two) == [
        f"results/report/{FIRST}/drilldown/a.html",
        f"results/report/{FIRST}/drilldown/b.html",
        f"results/report/{FIRST}/drilldown/compare.html",
    ]
    assert report_targets.compare_link(two, FIRST) == "compare.html"
    assert report_targets.item_pages(one) == [f"results/report/{FIRST}/drilldown/a.html"]
    assert report_targets.compare_link(one, FIRST) == ""


def test_replayed_ids_are_the_replay_backends_among_the_evaluated():
    config = filled(evaluate=["a", "gpu"])
    assert report_targets.replayed_in(config, FIRST) == ["a"]
    assert report_targets.replayed_models(config) == ["a"]
    # A per-model page's caption names only its own model; other entries name every replay.
    scores = catalog.Entry(FIRST, contract.study(FIRST).paths.scores("gpu"))
    assert scores.subcategory == "per-item records" and scores.name == "gpu"
    assert report_targets.caption_replayed(config, scores, FIRST) == []


def test_a_models_drilldown_waits_for_its_own_files_only():
    config = filled()
    every = run_wf.study_targets(config, FIRST)
    own = report_targets.model_targets(config, FIRST, "a")
    assert own and set(own) <= set(every)
    assert not [t for t in own if "b" in Path(t).with_suffix("").name.split("--")]


def test_phi_text_is_shown_unless_the_study_holds_phi():
    assert report_phi.shows_phi_text(filled(), FIRST)
    phi = filled(first={"contains_phi": True})
    assert not report_phi.shows_phi_text(phi, FIRST)
    phi["report"]["include_phi_text"] = True
    assert report_phi.shows_phi_text(phi, FIRST)


def test_the_models_a_run_calls_with_their_studies_signatures_and_extra_inputs():
    config = filled(evaluate=["b", "a"])
    assert run_wf.models_called_in(config, FIRST) == ["a", "b"]
    assert run_wf.models_called_in(config, OTHERS[0]) == []  # disabled: calls nothing
    assert run_wf.studies_of_models(config) == {"b": [FIRST], "a": [FIRST]}
    assert list(run_wf.used_model_cfgs(config)) == ["b", "a"]
    signatures = run_wf.model_signatures(config)
    assert signatures == {m: oc.model_signature(run_wf.model_cfg(config, m)) for m in ("b", "a")}
    assert signatures["a"] != signatures["b"]  # each replay's own answers folder
    assert run_wf.model_extra_inputs(config) == []  # replays need nothing before their jobs


def test_an_item_page_of_replayed_answers_says_so():
    config = filled(evaluate=["a", "gpu"])
    assert report_targets.item_page_label(config, FIRST, "a") == "items of a (stored answers)"
    assert report_targets.item_page_label(config, FIRST, "gpu") == "items of gpu"


def test_settling_the_demo_config_fills_narrows_and_sorts_it():
    demo = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    settled = {**demo, "only": FIRST, "bootstrap": {"seed": 7, "n_resamples": 200}}
    assert run_wf.settle_config(settled) == []
    assert oc.enabled_studies(settled) == [FIRST]  # only= switched the others off
    assert list(settled["bootstrap"]) == sorted(settled["bootstrap"])  # keys in order
    assert "include_phi_text" in settled["report"]  # a schema default, filled
    # Every study block is filled with its schema's defaults, the disabled ones too.
    assert all("contains_phi" in oc.study_block(settled, s) for s in STUDIES)


def test_a_config_the_schema_refuses_is_not_filled_and_each_problem_is_named():
    config = {"models": [{"id": "a", "backend": "replay"}], "evaluate": ["a"], "bootstrap": 3}
    problems = run_wf.settle_config(config)
    assert any(p.startswith("models[0]: 'path' is a required property") for p in problems)
    assert any(p.startswith("bootstrap:") for p in problems)
    assert "report" not in config  # nothing filled on top of a broken config


def test_settled_config_names_an_unknown_only_before_any_job():
    config = {"models": MODELS[:1], "evaluate": ["a"], "only": "nothing-here"}
    problems = run_wf.settle_config(config)
    assert any(p.startswith("only: 'nothing-here' is neither a study") for p in problems)
