"""Input and param helpers for rules/guidelines.smk (kept here so the .smk holds rules only).

Every helper takes the validated config (or the study block) and returns plain values, paths or
input functions. Param helpers return only what a rule's output depends on.
"""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from ... import config as oc
from .metaclf import FEATURE_SETS

STUDY = "guidelines"
RESULTS = "results/guidelines"

PROMPT_DEFAULTS = {
    "predict": "config/prompts/guidelines/predict_path.txt",
    "record": "config/prompts/guidelines/synth_record.txt",
    "record_predict": "config/prompts/guidelines/synth_record_predict.txt",
    "structured_note": "config/prompts/guidelines/synth_note_structured.txt",
    "unstructured_note": "config/prompts/guidelines/synth_note_unstructured.txt",
    "choose": "config/prompts/guidelines/choose_path.txt",
}
ROLLOUT_DEFAULTS = {"k": 10, "temperature": 1.0, "top_p": None, "max_new_tokens": 1000, "seed": 0}
SYNTH_DEFAULTS = {
    "n_targets": 50,
    "variants": ["structured", "unstructured"],
    "seed": 0,
    "temperature": 1.0,
    "max_new_tokens": 1000,
    "predict_max_new_tokens": 1000,
    "choose_max_new_tokens": 64,
    "rollouts": 1,
    "example_chars": 2000,
    "example_notes": None,
    "partial_to_chooser": False,
}
CONSISTENCY_DEFAULTS = {"delta": 0.9, "min_agree": 2, "pool": ["unlabelled"]}


def block(config: dict) -> dict:
    return (config.get("studies") or {}).get(STUDY) or {}


def _merged(defaults: dict, given: dict | None) -> dict:
    return {**defaults, **(given or {})}


def optional_inputs(path) -> list[str]:
    return [path] if path else []


def prompt(block_: dict, name: str) -> str:
    return (block_.get("prompts") or {}).get(name) or PROMPT_DEFAULTS[name]


def rollout_settings(block_: dict) -> dict:
    return _merged(ROLLOUT_DEFAULTS, block_.get("rollouts"))


def synthetic_settings(block_: dict) -> dict:
    return _merged(SYNTH_DEFAULTS, block_.get("synthetic"))


def consistency_settings(block_: dict) -> dict:
    return _merged(CONSISTENCY_DEFAULTS, block_.get("consistency"))


def feature_sets(block_: dict) -> list[str]:
    return list((block_.get("meta_classifier") or {}).get("feature_sets") or FEATURE_SETS)


def models(config: dict) -> list[str]:
    return oc.study_evaluated_models(config, STUDY)


def per_model(config: dict, pattern: str) -> list[str]:
    return [pattern.format(model=m) for m in models(config)]


def judge(config: dict, role: str) -> str | None:
    judges = oc.study_judges(config, STUDY)
    if role == "chooser":
        return judges.get("chooser") or judges.get("generator")
    return judges.get(role)


def judge_responses(config: dict, role: str, *requestsets: str) -> list[str]:
    mid = judge(config, role)
    if mid is None:
        return []
    return [f"{RESULTS}/responses/{mid}/{name}.jsonl" for name in requestsets]


def synthetic_enabled(config: dict) -> bool:
    return judge(config, "generator") is not None


def proxy_inputs(config: dict, results: str = RESULTS):
    """Input function of the per-model proxy rule (synthetic inputs only with a generator)."""

    def inputs(wildcards) -> dict:
        out = {
            "tree": f"{results}/prepared/tree.json",
            "scores": f"{results}/scores/{wildcards.model}.tsv",
            "rollouts": f"{results}/rollouts/{wildcards.model}.tsv",
        }
        if synthetic_enabled(config):
            out["benchmark"] = f"{results}/synthetic/benchmark.tsv"
            out["predict"] = f"{results}/responses/{wildcards.model}/synth_predict.jsonl"
        return out

    return inputs


def final_targets(config: dict, results: str = RESULTS) -> list[str]:
    b = block(config)
    tables = [
        "guideline_tree",
        "table1_expert",
        "annotators",
        "consistency_accuracy",
        "accuracy_by_consistency",
        "proxy_scores",
        "proxy_agreement",
        "compliance",
        "meta_classifier",
        "clustering",
        "error_analysis",
        "divergence_agreement",
    ]
    out = [f"{results}/tables/{t}.{ext}" for t in tables for ext in ("tsv", "md")]
    out += [f"{results}/error_analysis/divergence_{t}.tsv" for t in ("points", "pairs")]
    out += [
        f"{results}/figures/{f}.png"
        for f in ("accuracy_by_consistency", "proxy_heatmap", "divergence_pairs")
    ]
    out += [f"{results}/figures/roc_{fs}.png" for fs in feature_sets(b)]
    out += [f"{results}/figures/roc_feature_sets.png"]
    for kind in ("scores", "rollouts", "proxy"):
        out += per_model(config, f"{results}/{kind}/{{model}}.tsv")
    if synthetic_enabled(config):
        out.append(f"{results}/synthetic/benchmark.tsv")
    return out


def with_defaults(block_: dict, schema: dict) -> dict:
    """A copy of ``block_`` with every missing key filled from the schema's ``default``s."""
    out = copy.deepcopy(block_ or {})
    for key, sub in (schema.get("properties") or {}).items():
        if key not in out and "default" in sub:
            out[key] = copy.deepcopy(sub["default"])
        if isinstance(out.get(key), dict) and "properties" in sub:
            out[key] = with_defaults(out[key], sub)
    return out


def settings(config: dict, schema_path) -> dict:
    """The study block as the rules use it: the config's values over the schema's defaults."""
    schema = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8"))
    return with_defaults(block(config), schema)
