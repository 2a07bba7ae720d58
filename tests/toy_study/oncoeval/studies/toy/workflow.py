"""The rules' side of the toy study: result paths, declared outputs, final targets and what the
report shows of it."""

from __future__ import annotations

from ..contract import Headline, Resampling, ResultPaths

paths = ResultPaths("toy")
PROMPT = "config/prompts/toy/question.txt"
OUTPUTS = {
    "questions": paths.prepared("questions.jsonl"),
    "requests": paths.requests("ask"),
    "parsed": paths.parsed("{model}", "tsv"),
    "scores": paths.scores("{model}"),
    "accuracy": paths.table("accuracy"),
    "accuracy_md": paths("tables", "accuracy.md"),
    "accuracy_figure": paths.figure("accuracy"),
}
# The aggregate stage's outputs: its table, the table's Markdown twin and its figure.
OUTPUTS_AGGREGATE = {k: OUTPUTS[k] for k in ("accuracy", "accuracy_md", "accuracy_figure")}

# What the report and the summary show of the study.
REPORT_TITLE = "Toy (arithmetic questions, tests only)"
RESAMPLING = Resampling(unit="question", cluster="question")
HEADLINES = (Headline("toy", "tables/accuracy.tsv", "accuracy", "accuracy", kind="binary"),)


def comparison_inputs(config: dict) -> dict:
    return {}


def unit_scores(score_path, inputs: dict):
    """Per question: 1 right, 0 wrong, NaN unparseable (oncoeval.compare)."""
    import pandas as pd

    scores = pd.read_csv(score_path, sep="\t", dtype={"id": str})
    correct = pd.to_numeric(scores["correct"], errors="coerce")
    return pd.DataFrame(
        {"measure": "accuracy", "unit": scores["id"], "cluster": scores["id"], "value": correct}
    )


def final_targets(config: dict) -> list[str]:
    models = config["studies"]["toy"]["evaluate"] or config["evaluate"]
    """Every declared output, the per-model ones for each evaluated model."""
    fixed = [p for p in OUTPUTS.values() if "{model}" not in p]
    return fixed + [p.format(model=m) for p in OUTPUTS.values() if "{model}" in p for m in models]
