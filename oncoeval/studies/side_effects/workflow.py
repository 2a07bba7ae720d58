"""The rules' side of the study (rules/side_effects.smk): result paths, declared outputs, final
targets and the per-rule inputs and params.

Helpers read the study block that rules/common.smk validated and filled
(``config["studies"]["side_effects"]``); per-model helpers take only that block's settings, the
model id and the judge: never the list of models, so adding a model reruns nothing old.
"""

from __future__ import annotations

from ... import config as oc
from ..contract import Headline, Resampling, ResultPaths, prompts_dir

paths = ResultPaths("side_effects")

# For the report and the summary (oncoeval.report): the study's category title, what its
# bootstrap resamples, and its headline measures per model.
REPORT_TITLE = "Side effects (radiation side-effect lists)"
# A unit is one profile's list (specified variant) under one regime; each headline measure takes
# one regime, so a profile is one unit of it and its own cluster.
RESAMPLING = Resampling(unit="patient profile", cluster="patient profile")
HEADLINES = (
    Headline("side_effects", "tables/table1.tsv", "F1, free-form (ff)", "f1"),
    Headline("side_effects", "tables/table3.tsv", "F1, grounded", "f1"),
    Headline("side_effects", "tables/table4.tsv", "F1, grounded + list size", "f1"),
)
STUDY = paths.study
PROMPTS = prompts_dir(STUDY)
LISTS = "lists"  # the request set every evaluated model answers
MATCHER = "matcher"  # the judge role of the llm matcher

# Written here once: the rules declare these outputs, the scripts write them by name.
TABLES = tuple(f"table{i}" for i in range(1, 8))  # the paper's Tables 1-7
FIGURES = ("precision_recall", "recall_strata")
# The matcher-validation rule's tables: candidates, and the configured matchers as judges.
VALIDATION_TABLES = ("matcher_agreement", "judge_agreement", "judge_confusion", "judge_per_class")


def markdown_name(table: str) -> str:
    """The output name of a table's Markdown copy."""
    return f"{table}_md"


def _tables(names) -> dict[str, str]:
    out = {}
    for name in names:
        out[name] = paths.table(name)
        out[markdown_name(name)] = paths("tables", f"{name}.md")
    return out


PREPARED = {
    "profiles": paths.prepared("profiles.jsonl"),
    "reference": paths.prepared("reference.tsv"),
    "vocabulary": paths.prepared("vocabulary.txt"),
}
OUTPUTS_SCORE = {"scores": paths.scores("{model}"), "overlap": paths("overlap", "{model}.tsv")}
OUTPUTS_AGGREGATE = {**_tables(TABLES), **{name: paths.figure(name) for name in FIGURES}}
OUTPUTS_VALIDATION = _tables(VALIDATION_TABLES)
OUTPUTS = {**OUTPUTS_SCORE, **OUTPUTS_AGGREGATE, **OUTPUTS_VALIDATION}


def settings(config: dict) -> dict:
    """The study block, validated and with every schema default filled (rules/common.smk)."""
    return config["studies"][STUDY]


def judge(config: dict) -> str | None:
    return settings(config)["judges"][MATCHER]


def config_problem(config: dict) -> str | None:
    """A problem of the study block that the schema cannot see, or None."""
    if settings(config)["matcher"]["method"] == "llm" and not judge(config):
        return f"studies.{STUDY}.matcher.method is llm, but judges.matcher names no judge model"
    return None


def settings_problems(block: dict) -> list[str]:
    """Settings of the filled block the schema cannot check (oncoeval.config calls this)."""
    low, high = block["list_size"]
    if low > high:
        return [
            f"studies.{STUDY}.list_size: [{low}, {high}] has its minimum above its maximum; "
            "give [min, max], e.g. [20, 30]"
        ]
    return []


def templates(config: dict) -> dict[str, str]:
    return {regime: f"{PROMPTS}/{regime}.txt" for regime in settings(config)["regimes"]}


def matcher_params(config: dict) -> dict:
    """What a model's matches depend on (the judge id only for the llm matcher)."""
    cfg = settings(config)["matcher"]
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
    inputs = {"parsed": paths.parsed(model), "reference": PREPARED["reference"]}
    method = settings(config)["matcher"]["method"]
    if method == "lexical":
        inputs["synonyms"] = settings(config)["matcher"]["synonyms"]
    elif method == "llm":
        if not judge(config):
            raise ValueError(f"studies.{STUDY}.matcher.method is llm but judges.matcher is not set")
        inputs["judged"] = paths.responses(judge(config), f"match--{model}")
    return inputs


def validation_inputs(config: dict) -> dict:
    inputs = {
        "validation": settings(config)["validation"],
        "synonyms": settings(config)["matcher"]["synonyms"],
    }
    if judge(config):
        inputs["judged"] = paths.responses(judge(config), "validation")
    return inputs


# Headline measure -> the regime its table scores (Tables 1, 3, 4: the specified profiles).
HEADLINE_REGIMES = dict(
    zip((h.measure for h in HEADLINES), ("ff", "grounded", "grounded_lsc"), strict=True)
)


def comparison_inputs(config: dict) -> dict:
    """Inputs of the model comparison beside the scores (oncoeval.compare): none."""
    return {}


def unit_scores(score_path, inputs: dict):
    """Per-unit F1 of one model: each specified profile's list under each headline regime
    (NaN: the list could not be scored), clustered by profile."""
    import pandas as pd

    scores = pd.read_csv(score_path, sep="\t", dtype={"profile_id": str})
    spec = scores[scores["variant"] == "specified"]
    rows = [
        {
            "measure": measure,
            "unit": f"{r.profile_id}/{regime}",
            "cluster": r.profile_id,
            "value": r.f1,
        }
        for measure, regime in HEADLINE_REGIMES.items()
        for r in spec[spec["regime"] == regime].itertuples()
    ]
    return pd.DataFrame(rows, columns=["measure", "unit", "cluster", "value"])


def final_targets(config: dict) -> list[str]:
    """The study's final targets: the tables and figures, and every evaluated model's scores."""
    models = oc.study_evaluated_models(config, STUDY)
    fixed = [path for path in OUTPUTS.values() if "{model}" not in path]
    per_model = [path.format(model=m) for path in OUTPUTS_SCORE.values() for m in models]
    return fixed + per_model
