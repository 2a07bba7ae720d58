"""Helpers for rules/side_effects.smk: paths, per-rule inputs and params, final targets.

Per-model helpers take only the study block, the model id and the judge: never the list of
models, so adding a model reruns nothing old.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path

import yaml

STUDY = "side_effects"
ROOT = f"results/{STUDY}"
PROMPTS = f"config/prompts/{STUDY}"
LISTS = "lists"  # the request set every evaluated model answers
TABLES = [f"table{i}" for i in range(1, 8)]
FIGURES = ["precision_recall", "recall_strata"]


SCHEMA = Path(__file__).resolve().parents[3] / "config" / "schemas" / f"{STUDY}.schema.yaml"


def fill_defaults(schema: dict, value):
    """``value`` with the schema's defaults filled in, recursively through object properties.

    Snakemake's ``validate`` fills defaults of the top schema only, not of a ``$ref``'d one.
    """
    if value is None and "default" in schema:
        value = copy.deepcopy(schema["default"])
    if isinstance(value, dict) and "properties" in schema:
        value = dict(value)
        for key, sub in schema["properties"].items():
            if key in value:
                value[key] = fill_defaults(sub, value[key])
            elif "default" in sub:
                value[key] = fill_defaults(sub, copy.deepcopy(sub["default"]))
    return value


@functools.cache
def _schema() -> dict:
    return yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))


def block(config: dict) -> dict:
    """The study block with every default of its schema filled in."""
    return fill_defaults(_schema(), (config.get("studies") or {}).get(STUDY) or {})


def judge(config: dict) -> str | None:
    return (block(config).get("judges") or {}).get("matcher")


def config_problem(config: dict) -> str | None:
    """A problem of the study block that the schema cannot see, or None."""
    if block(config)["matcher"]["method"] == "llm" and not judge(config):
        return f"studies.{STUDY}.matcher.method is llm, but judges.matcher names no judge model"
    return None


def templates(config: dict) -> dict[str, str]:
    return {regime: f"{PROMPTS}/{regime}.txt" for regime in block(config)["regimes"]}


def matcher_params(config: dict) -> dict:
    """What a model's matches depend on (the judge id only for the llm matcher)."""
    cfg = dict(block(config)["matcher"])
    method = cfg["method"]
    out = {"method": method}
    if method == "embedding":
        out.update(model=cfg["model"], threshold=cfg["threshold"])
    elif method == "llm":
        out.update(judge=judge(config), judge_max_new_tokens=cfg["judge_max_new_tokens"])
    return out


def validation_methods(config: dict) -> list[str]:
    """Matchers whose agreement is reported: lexical and embedding, and llm with a judge."""
    methods = ["lexical", "embedding"]
    if judge(config):
        methods.append("llm")
    return methods


def match_inputs(config: dict, model: str) -> dict:
    inputs = {
        "parsed": f"{ROOT}/parsed/{model}.jsonl",
        "reference": f"{ROOT}/prepared/reference.tsv",
    }
    method = block(config)["matcher"]["method"]
    if method == "lexical":
        inputs["synonyms"] = block(config)["matcher"]["synonyms"]
    elif method == "llm":
        if not judge(config):
            raise ValueError(f"studies.{STUDY}.matcher.method is llm but judges.matcher is not set")
        inputs["judged"] = f"{ROOT}/responses/{judge(config)}/match--{model}.jsonl"
    return inputs


def validation_inputs(config: dict) -> dict:
    inputs = {
        "validation": block(config)["validation"],
        "synonyms": block(config)["matcher"]["synonyms"],
    }
    if judge(config):
        inputs["judged"] = f"{ROOT}/responses/{judge(config)}/validation.jsonl"
    return inputs


def table_paths(ext: str) -> list[str]:
    return [f"{ROOT}/tables/{name}.{ext}" for name in TABLES]


def figure_paths() -> list[str]:
    return [f"{ROOT}/figures/{name}.png" for name in FIGURES]


# The matcher-validation rule's tables: candidates, and the configured matchers as judges.
VALIDATION_TABLES = ("matcher_agreement", "judge_agreement", "judge_confusion", "judge_per_class")


def final_targets(models: list[str]) -> list[str]:
    per_model = [f"{ROOT}/{kind}/{m}.tsv" for kind in ("scores", "overlap") for m in models]
    return (
        table_paths("tsv")
        + table_paths("md")
        + [f"{ROOT}/tables/{name}.{ext}" for name in VALIDATION_TABLES for ext in ("tsv", "md")]
        + figure_paths()
        + per_model
    )
