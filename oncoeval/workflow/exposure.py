"""The rules' side of rules/exposure.smk (the exposure audit: oncoeval.exposure): which studies can be audited, what a probe request set
depends on, and the audit's targets.

A study that can be audited declares ``exposure`` (an ``ExposureSource``) in its ``Study``: its prepared items file, the id and text keys of an item, and how the prompt names the
dataset. Its schema has the ``exposure`` block (probes, n_items, seed, max_new_tokens).
"""

from __future__ import annotations

from ..backends import get_backend
from ..config import checks as oc
from ..studies import STUDIES, contract
from ..studies.contract import ExposureSource, ResultPaths, prompts_dir

PROMPTS = prompts_dir("exposure")
REQUESTSET = "exposure_{probe}"


def source(study: str) -> ExposureSource | None:
    """The study's declared ``exposure``, or None (a study that cannot be audited)."""
    return contract.study(study).exposure


def auditable_studies() -> list[str]:
    return [s for s in STUDIES if source(s) is not None]


def block(config: dict, study: str) -> dict:
    """The study's filled ``exposure`` block."""
    return oc.study_block(config, study).get("exposure") or {}


def enabled(config: dict, study: str) -> bool:
    return bool(block(config, study).get("enabled")) and source(study) is not None


def probe_params(config: dict, study: str) -> dict:
    """What a probe request set depends on: the probe settings and the dataset's naming."""
    b, src = block(config, study), source(study)
    keys = ("seed", "n_items", "max_new_tokens")
    return {k: b[k] for k in keys} | {
        "dataset": src.dataset,
        "kind": src.kind,
        "id_key": src.id_key,
        "text_key": src.text_key,
    }


def requests(study: str, probe: str) -> str:
    return ResultPaths(study).requests(REQUESTSET.format(probe=probe))


def responses(study: str, model: str, probe: str) -> str:
    return ResultPaths(study).responses(model, REQUESTSET.format(probe=probe))


def item_table(study: str, model: str) -> str:
    return ResultPaths(study).exposure(model)


def table_outputs(study: str) -> dict[str, str]:
    paths = ResultPaths(study)
    return paths.tables("exposure") | {"figure": paths.figure("exposure")}


def not_run(config: dict, study: str, model: str) -> dict[str, str]:
    """probe -> why, for each probe of the study this model cannot answer (the likelihood probe
    needs a backend that returns token log-probabilities)."""
    if "likelihood" not in block(config, study)["probes"]:
        return {}
    cfg = oc.models_by_id(config)[model]
    problem = get_backend(cfg["backend"]).text_logprobs_problem(cfg)
    return {"likelihood": problem} if problem else {}


def model_probes(config: dict, study: str, model: str) -> list[str]:
    """The probes this model answers."""
    skipped = not_run(config, study, model)
    return [p for p in block(config, study)["probes"] if p not in skipped]


def table_not_run(config: dict, study: str) -> dict[str, dict[str, str]]:
    """model -> probe -> why, for the study's table."""
    return {m: not_run(config, study, m) for m in oc.study_evaluated_models(config, study)}


def score_inputs(config: dict, study: str, model: str) -> dict:
    probes = model_probes(config, study, model)
    return {
        "requests": [requests(study, p) for p in probes],
        "responses": [responses(study, model, p) for p in probes],
    }


def table_inputs(config: dict, study: str) -> list[str]:
    return [item_table(study, m) for m in oc.study_evaluated_models(config, study)]


def targets(config: dict, study: str) -> list[str]:
    """The audit's final targets when it is enabled for the study: each model's item table
    and the study's exposure table."""
    if not enabled(config, study):
        return []
    return table_inputs(config, study) + list(table_outputs(study).values())
