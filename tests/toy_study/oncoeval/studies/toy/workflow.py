"""The rules' side of the toy study: result paths, declared outputs, final targets and what the
report shows of it."""

from __future__ import annotations

from ..contract import Headline, ResultPaths

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
RESAMPLING_UNIT = "question"
HEADLINES = (Headline("toy", "tables/accuracy.tsv", "accuracy", "accuracy"),)


def final_targets(config: dict) -> list[str]:
    models = config["studies"]["toy"]["evaluate"] or config["evaluate"]
    """Every declared output, the per-model ones for each evaluated model."""
    fixed = [p for p in OUTPUTS.values() if "{model}" not in p]
    return fixed + [p.format(model=m) for p in OUTPUTS.values() if "{model}" in p for m in models]
