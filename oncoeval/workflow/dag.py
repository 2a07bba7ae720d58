"""The rules' side of the whole workflow: what the `.smk` files ask while Snakemake builds the DAG.

Each study's own helpers live in ``oncoeval/studies/{study}/workflow.py``; this module holds the
ones every study shares: the config checked and settled (``settle_config``, called once by
rules/common.smk), which studies and models a run evaluates, its final targets, the model and
scheduler resources of a `generate` job, and the inputs of a study's model comparison. The other
functions take the config as ``settle_config`` leaves it and, where they need them, the
Snakemake ``workflow`` object or a job's wildcards; the `.smk` files call them in one-line input
functions and params.
"""

from __future__ import annotations

import itertools

from oncoeval import backends
from oncoeval.config import checks as oc
from oncoeval.core import layout
from oncoeval.core.credentials import redact_url
from oncoeval.core.errors import ConfigError
from oncoeval.core.layout import ResultPaths
from oncoeval.studies import contract
from oncoeval.workflow import exposure as exposure_wf

# The ad-hoc request sets (the config's `adhoc` key, rules/adhoc.smk): a study in file names and
# wildcards, without a study package.
ADHOC = "adhoc"


def settle_config(config: dict) -> list[str]:
    """Check ``config`` and settle it in place as the workflow holds it; every problem found.

    First what the schemas see (shapes, types, unknown keys; ``oncoeval.config.checks.schema_problems``),
    and only if that is clean: every schema default filled once, study blocks included
    (``fill_workflow_config``), the run narrowed by ``only=`` (``apply_only``), then what the
    schemas cannot see (references between keys, data paths, PHI routes, API key variables;
    ``config_problems``). A clean config then has its mappings in key order at every level, so
    that params built from config blocks do not change (and rerun jobs) when a config file lists
    the same keys in another order. A config with problems must not be used.
    """
    problems = oc.schema_problems(config)
    if problems:
        return problems
    oc.fill_workflow_config(config)
    problems = oc.expand_paths(config) + oc.apply_only(config)
    problems += oc.config_problems(config)
    if not problems:
        oc.sort_mappings_in_place(config)
    return problems


def study_enabled(config: dict, study: str) -> bool:
    """Whether the run evaluates ``study`` (its block's ``enabled``)."""
    return study in oc.enabled_studies(config)


def evaluated_models(config: dict, study: str) -> list[str]:
    """Model ids evaluated by a study (its own ``evaluate`` list, else the global one)."""
    return oc.study_evaluated_models(config, study)


def model_cfg(config: dict, model_id: str) -> dict:
    """The entry of ``models`` with this id (``phi_safe`` filled, oncoeval.config.checks.models_by_id)."""
    return oc.models_by_id(config)[model_id]


def used_model_cfgs(config: dict) -> dict[str, dict]:
    """Every model the run calls (evaluated or judge, ``oncoeval.config.checks.used_models``) by id."""
    return {mid: model_cfg(config, mid) for mid in oc.used_models(config)}


def models_called_in(config: dict, study: str) -> list[str]:
    """The ids of the models a study calls (evaluated and judges), sorted."""
    return sorted(m for m, studies in oc.used_models(config).items() if study in studies)


def studies_of_models(config: dict) -> dict[str, list[str]]:
    """For every model the run calls, the studies that call it, sorted."""
    return {m: sorted(studies) for m, studies in oc.used_models(config).items()}


def model_extra_inputs(config: dict) -> list[str]:
    """The files the run's models need before their jobs (an hf GGUF's conversion manifest,
    ``oncoeval.backends.extra_inputs``), model by model."""
    return [path for cfg in used_model_cfgs(config).values() for path in backends.extra_inputs(cfg)]


def model_signatures(config: dict) -> dict[str, str]:
    """Each model's signature (``oncoeval.config.checks.model_signature``): what its answers depend on.

    Snakemake's report embeds a report job's params in a ``<script>`` without escaping them, so
    ``<``, ``>`` and ``&`` are written as JSON escapes: the same JSON value, and a ``</script>`` in
    a model string stays text instead of closing the report's script."""
    return {
        mid: script_safe_json(oc.model_signature(cfg))
        for mid, cfg in used_model_cfgs(config).items()
    }


def script_safe_json(text: str) -> str:
    """JSON text with ``<``, ``>`` and ``&`` escaped (``\\u003c``...): inert inside ``<script>``."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def estimate_models(config: dict) -> dict[str, dict]:
    """The model entries `make estimate` prices with, their URLs without credentials (the file
    lies under results/, oncoeval.core.credentials)."""
    return {
        mid: {k: redact_url(v) if isinstance(v, str) else v for k, v in cfg.items()}
        for mid, cfg in oc.models_by_id(config).items()
    }


def routed_model_cfg(config: dict, wildcards, routes: set[tuple[str, str]]) -> dict:
    """The model of a `generate` job, once its (study, model) pair is one of the checked ``routes``.

    ``routes`` are the pairs of ``oncoeval.config.checks.model_routes``, whose PHI routes the config
    check saw; a job outside them is refused rather than sending data along an unchecked route.
    """
    if (wildcards.study, wildcards.model) not in routes:
        raise ConfigError(
            f"generate: no config key sends study {wildcards.study!r} to model "
            f"{wildcards.model!r}, so its PHI route was not checked (oncoeval.config.checks.model_routes "
            "lists every route; a new one must be added there)."
        )
    return model_cfg(config, wildcards.model)


def profile_default_resource(workflow, key: str):
    """The `default-resources` entry for ``key`` (profile or command line) as written, else None.

    ``workflow`` is Snakemake's workflow object (the global of a Snakefile).
    """
    defaults = workflow.resource_settings.default_resources
    if not defaults or key not in defaults:
        return None
    value = defaults[key]
    return getattr(value, "raw", value)


def generate_resource(config: dict, workflow, wildcards, key: str, default=None):
    """One scheduler resource of the `generate` job for the model of ``wildcards``.

    Keys the model does not set fall back to ``default``, else to the profile's default-resources
    (a rule resource, even None, would otherwise hide the profile's partition or constraint).
    """
    value = oc.generate_resources(model_cfg(config, wildcards.model)).get(key)
    if value is None:
        value = default if default is not None else profile_default_resource(workflow, key)
    return value


def study_targets(config: dict, study: str) -> list[str]:
    """A study's final targets: its ``OUTPUTS`` for its evaluated models
    (``oncoeval.studies.contract.final_targets``); for the ad-hoc sets, every evaluated model's
    responses to every set."""
    if study == ADHOC:
        return [
            ResultPaths(ADHOC).responses(model, requestset)
            for model, requestset in itertools.product(config["evaluate"], config["adhoc"])
        ]
    return contract.final_targets(
        study, oc.study_block(config, study), evaluated_models(config, study)
    ) + exposure_wf.targets(config, study)


def final_targets(config: dict) -> list[str]:
    """Every file the run must end with, beside the report: per enabled study its final targets,
    its model-calls table, its model comparison and leaderboard (rules/compare.smk); then the
    ad-hoc sets' responses."""
    targets = []
    for study in oc.STUDIES:
        if study_enabled(config, study):
            targets += study_targets(config, study)
            targets += [
                ResultPaths(study).table(name)
                for name in (layout.MODEL_CALLS, layout.MODEL_COMPARISON, layout.LEADERBOARD)
            ]
    return targets + study_targets(config, ADHOC)


def comparison_inputs(config: dict, study: str) -> dict:
    """The inputs of a study's model comparison: every evaluated model's scores, then the files
    the study's ``comparison_inputs(config)`` names."""
    declared = contract.study(study)
    scores = [declared.paths.scores(m) for m in evaluated_models(config, study)]
    return {"scores": scores, **declared.comparison_inputs(config)}


def comparison_params(config: dict, study: str) -> dict:
    """What a study's comparison depends on beside its inputs (its ``comparison_params``, if any)."""
    own = contract.study(study).comparison_params
    return own(config) if own else {}
