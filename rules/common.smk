"""Python side of the workflow: config validation, model lookups and input/param helpers."""

import importlib
import os
from pathlib import Path

from snakemake.utils import min_version

from oncoeval import config as oc
from oncoeval.studies import contract

min_version("9.0")


# Every problem of the config is reported at once, before any job: first what the schemas see
# (shapes, types, unknown keys), then what they cannot (references between keys, data paths,
# PHI routes, API key variables, hardware).
# The schema is config/config.schema.yaml with each backend's part (oncoeval.config.config_schema).
_problems = oc.schema_problems(config)
if not _problems:
    # Defaults filled once, study blocks included; the packages repeat none.
    oc.fill_workflow_config(config)
    # `only=` / `limit=` (e.g. from --config) narrow the run before anything is checked.
    _problems = oc.apply_only(config) + oc.config_problems(config)
if _problems:
    raise WorkflowError(f"config: {oc.format_problems(_problems)}")
# Mappings in key order, at every level: params built from config blocks then do not change
# (and rerun jobs) when a config file lists the same keys in another order.
oc.sort_mappings_in_place(config)
MODELS = oc.models_by_id(config)
# The (study, model) pairs whose data routes were checked above; `generate` refuses any other.
GENERATE_ROUTES = {(r.study, r.model) for r in oc.model_routes(config)}
# A capped run (limit=N) says so in every table it writes (oncoeval.io.write_table).
oc.export_item_limit(config)
ITEM_LIMIT = oc.item_limit(config)

# The GGUF conversion store is shared by every hf job of the run.
os.environ.setdefault("ONCOEVAL_MODEL_STORE", config["model_store"])

# Scripts import the oncoeval package of this checkout, in the venv, in `--sdm conda` envs (which
# do not install it) and in SLURM jobs (sbatch --export=ALL passes the variable on).
oc.put_first_on_pythonpath(workflow.basedir)

STUDY_NAMES = list(oc.STUDIES) + ["adhoc"]

# Per study, a function returning its final targets (its OUTPUTS, oncoeval.studies.contract);
# rules/adhoc.smk adds the ad-hoc sets' own.
STUDY_TARGETS = {
    study: lambda study=study: contract.final_targets(
        study, config["studies"][study], evaluated_models(study)
    )
    for study in oc.STUDIES
}


wildcard_constraints:
    study="|".join(STUDY_NAMES),
    model="|".join(sorted(MODELS)) or "NO_MODELS",
    requestset=r"[A-Za-z0-9._-]+",


def study_enabled(study):
    return study in oc.enabled_studies(config)


def evaluated_models(study):
    """Model ids evaluated by a study (its own list, else the global `evaluate`)."""
    return oc.study_evaluated_models(config, study)


def model_cfg(model_id):
    return MODELS[model_id]


def routed_model_cfg(wildcards):
    """The model of a `generate` job, once its (study, model) pair is a checked route."""
    if (wildcards.study, wildcards.model) not in GENERATE_ROUTES:
        raise WorkflowError(
            f"generate: no config key sends study {wildcards.study!r} to model "
            f"{wildcards.model!r}, so its PHI route was not checked (oncoeval.config.model_routes "
            "lists every route; a new one must be added there)."
        )
    return model_cfg(wildcards.model)


def profile_default_resource(key):
    """The `default-resources` entry for `key` (profile or command line) as written, else None."""
    defaults = workflow.resource_settings.default_resources
    if not defaults or key not in defaults:
        return None
    value = defaults[key]
    return getattr(value, "raw", value)


def generate_resource(wildcards, key, default=None):
    """One scheduler resource of the `generate` job for this model.

    Keys the model does not set fall back to `default`, else to the profile's default-resources
    (a rule resource, even None, would otherwise hide the profile's partition or constraint).
    """
    value = oc.generate_resources(model_cfg(wildcards.model)).get(key)
    if value is None:
        value = default if default is not None else profile_default_resource(key)
    return value


def get_final_output():
    targets = []
    for name, targets_of in STUDY_TARGETS.items():
        if name == "adhoc" or study_enabled(name):
            targets.extend(targets_of())
        if name != "adhoc" and study_enabled(name):
            targets.append(f"results/{name}/tables/model_calls.tsv")
            # Every pair of evaluated models and the leaderboard (rules/compare.smk).
            targets.append(f"results/{name}/tables/model_comparison.tsv")
            targets.append(f"results/{name}/tables/leaderboard.tsv")
    return targets


# The model comparison of a study (rules/compare.smk): its scores, inputs and params.
def study_workflow(study):
    return importlib.import_module(f"oncoeval.studies.{study}.workflow")


def comparison_inputs(wildcards):
    workflow = study_workflow(wildcards.study)
    scores = [workflow.paths.scores(m) for m in evaluated_models(wildcards.study)]
    return {"scores": scores, **workflow.comparison_inputs(config)}


def comparison_params(study):
    """What a study's comparison depends on beside its inputs (its comparison_params, if any)."""
    own = getattr(study_workflow(study), "comparison_params", None)
    return own(config) if own else {}
