"""The rules' side of the toy study: result paths, declared outputs, what the config checks and
the report know of the study, and the rules' input helpers.

Copy this file for a new study: everything the workflow, the config checks and the report need
to know of a study is one value at its end, ``STUDY = Study(...)`` (oncoeval/studies/contract.py
says each field); no other existing file names the study.
"""

from __future__ import annotations

from ..contract import Headline, Resampling, ResultPaths, Study, outputs, prompts_dir

paths = ResultPaths("toy")
PROMPTS = prompts_dir(paths.study)
REQUESTSET = "ask"  # the one request set: evaluated models and the referee answer it alike
REFEREE = "referee"  # the judge role: a model whose answers the others are compared with

# Intermediate files, inputs of later rules.
QUESTIONS = paths.prepared("questions.jsonl")
REQUESTS = paths.requests(REQUESTSET)
PARSED = paths.parsed("{model}", "tsv")

# Published outputs by rule (rules declare `output: **OUTPUTS_<RULE>`, scripts write by name).
OUTPUTS_SCORE = {"scores": paths.scores("{model}")}
OUTPUTS_AGGREGATE = {**paths.tables("accuracy"), "accuracy_figure": paths.figure("accuracy")}
OUTPUTS_REFEREE = paths.tables("referee_agreement")
# Every published output (the final targets): {model} is each evaluated model.
OUTPUTS = {**OUTPUTS_SCORE, **OUTPUTS_AGGREGATE, **OUTPUTS_REFEREE}


def comparison_inputs(config: dict) -> dict:
    return {}


def unit_scores(score_path, inputs: dict):
    """Per question: 1 right, 0 wrong, NaN unparseable (oncoeval.stats.compare)."""
    import pandas as pd

    scores = pd.read_csv(score_path, sep="\t", dtype={"id": str})
    correct = pd.to_numeric(scores["correct"], errors="coerce")
    return pd.DataFrame(
        {"measure": "accuracy", "unit": scores["id"], "cluster": scores["id"], "value": correct}
    )


def data_keys(block: dict) -> dict[str, bool]:
    """The questions file; the run cannot do without it."""
    return {"questions": True}


def judge_roles(block: dict) -> list[tuple[str, str]]:
    return [(f"judges.{REFEREE}", "referee")]


def required_roles(block: dict) -> list[tuple[str, str]]:
    if block["referee_agreement"]:
        return [(f"judges.{REFEREE}", "referee_agreement is true")]
    return []


def unused_outputs(block: dict) -> list[str]:
    return [] if block["referee_agreement"] else list(OUTPUTS_REFEREE)


def referee(block: dict) -> str | None:
    return block["judges"][REFEREE]


def referee_inputs(block: dict, models: list[str]) -> dict[str, str]:
    """The referee agreement rule's inputs: each evaluated model's parsed answers, by model
    id, and the referee's (named ``referee``)."""
    inputs = {m: PARSED.format(model=m) for m in models}
    return {**inputs, REFEREE: PARSED.format(model=referee(block))}


# What the report, the summary, the comparison and the config checks know of the study.
STUDY = Study(
    name=paths.study,
    title="Toy (arithmetic questions, tests only)",
    paths=paths,
    outputs=outputs(
        OUTPUTS,
        {
            # the figure draws this table and, without a caption of its own, shares its caption
            "accuracy": {"caption": "Share of arithmetic questions answered right, per model."},
            "referee_agreement": {
                "caption": "How often each model gives the referee model's number.",
                "unit": "none (counts of equal answers)",
            },
        },
    ),
    resampling=Resampling(unit="question", cluster="question"),
    headlines=(
        Headline("toy", paths.rel.table("accuracy"), "accuracy", "accuracy", kind="binary"),
    ),
    data_keys=data_keys,
    judge_roles=judge_roles,
    required_roles=required_roles,
    unused_outputs=unused_outputs,
    unit_scores=unit_scores,
    comparison_inputs=comparison_inputs,
)
