"""The rules' side of the study (rules/side_effects.smk): result paths, declared outputs, what the
config checks and the report know of the study, and the per-rule inputs and params.

Helpers take the study block that rules/common.smk validated and filled
(``oncoeval.core.blocks.study_block``); per-model helpers take only that block's settings, the model id
and the judge: never the list of models, so adding a model reruns nothing old.
"""

from __future__ import annotations

from ..contract import (
    Answers,
    ExposureSource,
    Headline,
    ItemScore,
    Resampling,
    ResultPaths,
    Study,
    outputs,
    prompts_dir,
)

paths = ResultPaths("side_effects")

LISTS = "lists"  # the request set every evaluated model answers
# The headline measures per model: each counts the specified profiles it scored.
HEADLINES = tuple(
    Headline(paths.study, paths.rel.table(table), measure, "f1", n_column="n_profiles", **kw)
    for table, measure, kw in (
        ("table1", "F1, free-form (ff)", {"primary": True}),
        ("table3", "F1, grounded", {}),
        ("table4", "F1, grounded + list size", {}),
    )
)
NAME = paths.study
PROMPTS = prompts_dir(NAME)
MATCHER = "matcher"  # the judge role of the llm matcher

# Written here once: the rules declare these outputs, the scripts write them by name.
TABLES = tuple(f"table{i}" for i in range(1, 8))  # the paper's Tables 1-7
FIGURES = ("precision_recall", "recall_strata")
# The matcher-validation rule's tables: candidates, and the configured matchers as judges.
VALIDATION_TABLES = ("matcher_agreement", "judge_agreement", "judge_confusion", "judge_per_class")

PREPARED = {
    "profiles": paths.prepared("profiles.jsonl"),
    "reference": paths.prepared("reference.tsv"),
    "vocabulary": paths.prepared("vocabulary.txt"),
}
OUTPUTS_SCORE = {"scores": paths.scores("{model}"), "overlap": paths("overlap", "{model}.tsv")}
OUTPUTS_AGGREGATE = {
    **paths.tables(*TABLES),
    **{name: paths.figure(name) for name in FIGURES},
}
OUTPUTS_VALIDATION = paths.tables(*VALIDATION_TABLES)
OUTPUTS = {**OUTPUTS_SCORE, **OUTPUTS_AGGREGATE, **OUTPUTS_VALIDATION}


def new_tokens(block: dict, requestset: str) -> int | None:
    """The new tokens a request of the judge's sets (``match--*``, ``validation``) or of the
    answer set asks for (``make estimate``)."""
    if requestset.startswith("match--") or requestset == "validation":
        return block["matcher"]["judge_max_new_tokens"]
    return block["max_new_tokens"] if requestset == LISTS else None


def data_keys(block: dict) -> dict[str, bool]:
    return {"profiles": True, "reference": True, "validation": False}


def judge_roles(block: dict) -> list[tuple[str, str]]:
    # The matcher judge answers the llm matcher and, whenever set, the matcher validation.
    return [(f"judges.{MATCHER}", "matcher judge")]


def required_roles(block: dict) -> list[tuple[str, str]]:
    if block["matcher"]["method"] == "llm":
        return [(f"judges.{MATCHER}", "matcher.method is llm")]
    return []


def settings_problems(block: dict) -> list[str]:
    """Settings of the filled block the schema cannot check (oncoeval.config calls this)."""
    low, high = block["list_size"]
    if low > high:
        return [
            f"studies.{NAME}.list_size: [{low}, {high}] has its minimum above its maximum; "
            "give [min, max], e.g. [20, 30]"
        ]
    return []


def judge(block: dict) -> str | None:
    return block["judges"][MATCHER]


def templates(block: dict) -> dict[str, str]:
    return {regime: f"{PROMPTS}/{regime}.txt" for regime in block["regimes"]}


def matcher_params(block: dict) -> dict:
    """What a model's matches depend on (the judge id only for the llm matcher)."""
    cfg = block["matcher"]
    method = cfg["method"]
    out = {"method": method}
    if method == "embedding":
        out.update(model=cfg["model"], threshold=cfg["threshold"])
    elif method == "llm":
        out.update(judge=judge(block), judge_max_new_tokens=cfg["judge_max_new_tokens"])
    return out


def validation_methods(block: dict) -> list[str]:
    """Matchers whose agreement is reported: lexical and embedding, and llm with a judge."""
    methods = ["lexical", "embedding"]
    if judge(block):
        methods.append("llm")
    return methods


def match_inputs(block: dict, model: str) -> dict:
    """The match rule's inputs (the config checks made sure the llm matcher has its judge)."""
    inputs = {"parsed": paths.parsed(model), "reference": PREPARED["reference"]}
    method = block["matcher"]["method"]
    if method == "lexical":
        inputs["synonyms"] = block["matcher"]["synonyms"]
    elif method == "llm":
        inputs["judged"] = paths.responses(judge(block), f"match--{model}")
    return inputs


def validation_inputs(block: dict) -> dict:
    inputs = {"validation": block["validation"], "synonyms": block["matcher"]["synonyms"]}
    if judge(block):
        inputs["judged"] = paths.responses(judge(block), "validation")
    return inputs


# Headline measure -> the regime its table scores (Tables 1, 3, 4: the specified profiles).
HEADLINE_REGIMES = dict(
    zip((h.measure for h in HEADLINES), ("ff", "grounded", "grounded_lsc"), strict=True)
)


def comparison_inputs(config: dict) -> dict:
    """Inputs of the model comparison beside the scores (oncoeval.workflow.comparison): none."""
    return {}


def unit_scores(score_path, inputs: dict):
    """Per-unit F1 of one model: each specified profile's list under each headline regime
    (NaN: the list could not be scored), clustered by profile."""
    import pandas as pd

    from .score import unit_id

    scores = pd.read_csv(score_path, sep="\t", dtype={"profile_id": str, "cluster": str})
    spec = scores[scores["variant"] == "specified"]
    rows = [
        {
            "measure": measure,
            "unit": unit_id(r.profile_id, "specified", regime),
            "cluster": getattr(r, "cluster", r.profile_id),
            "value": r.f1,
        }
        for measure, regime in HEADLINE_REGIMES.items()
        for r in spec[spec["regime"] == regime].itertuples()
    ]
    return pd.DataFrame(rows, columns=["measure", "unit", "cluster", "value"])


# What the report, the summary, the comparison and the config checks know of the study.
_BARS = (
    "bars are means with 95% CIs over profiles (the tables' intervals) as error bars, each "
    "labelled with its value and n"
)
# Tables 1-7 average a profile's regimes and variants within it first.
_PROFILE = "patient profile"
_VALIDATION_ROW = "labelled validation row"
_TABLE_CAPTIONS = {
    "table1": "Precision, recall and F1 of free-form side-effect lists (ff).",
    "table2": "Effect of the list-size constraint (ff_lsc - ff), paired by profile.",
    "table3": "Selection from the clinician-curated list (grounded).",
    "table4": "Selection from the curated list with the list-size constraint.",
    "table5": "Overlap ratio between base and specified profiles.",
    "table6": "Recall by temporal onset.",
    "table7": "Recall by side-effect frequency.",
}

STUDY = Study(
    name=NAME,
    title="Side effects (radiation side-effect lists)",
    paths=paths,
    outputs=outputs(
        OUTPUTS,
        {
            **{
                table: {"caption": caption, "unit": _PROFILE}
                for table, caption in _TABLE_CAPTIONS.items()
            },
            "matcher_agreement": {
                "caption": "Agreement of the side-effect matcher with the reference.",
                "unit": _VALIDATION_ROW,
            },
            "judge_agreement": {
                "caption": "The configured matcher as a judge of the labelled pairs: agreement "
                "and Cohen's κ.",
                "unit": _VALIDATION_ROW,
            },
            "judge_per_class": {
                "caption": "Matcher sensitivity and specificity per label (same / not) on the "
                "validation pairs.",
                "unit": _VALIDATION_ROW,
            },
            "judge_confusion": {
                "caption": "Matcher decisions against the validation labels (confusion matrix).",
                "unit": "none (counts)",
            },
            # Per-model per-item tables ({folder}/{model}.tsv; {name} is the model).
            "scores": {
                "caption": "Per-item scores of {name}: one row per profile, variant and "
                "prompting regime with its matched, predicted and reference counts, precision, "
                "recall, F1 and recall per stratum; an answer with no list keeps its row with "
                "status and reason."
            },
            "overlap": {
                "caption": "Overlap of {name}'s lists for each base profile and its specified "
                "variant, one row per profile and regime."
            },
            "precision_recall": {
                "caption": "Precision against recall of the specified profiles per model and "
                "prompting regime: each point is the mean over profiles with 95% CIs (the "
                "tables' intervals) as error bars, labelled with its values and n profiles; "
                "coinciding points show as nested rings.",
                "table": "table1",
            },
            "recall_strata": {
                "caption": "Recall of the specified profiles by onset and by frequency stratum "
                f"per model, averaged over regimes: {_BARS} (profiles); a stratum without data "
                "reads 'no data'.",
                "table": "table6",
            },
        },
    ),
    # A unit is one profile's list (of one variant) under one regime; the profile is the
    # cluster: its regimes (and its base and specified variants) are resampled together, never
    # apart. A headline measure takes one regime of the specified variant, so it has one unit
    # per profile; tables that pool regimes or variants average them within the profile first.
    resampling=Resampling(
        unit="profile list (one variant under one regime)",
        cluster="patient profile (its regimes and variants)",
    ),
    headlines=HEADLINES,
    answers=Answers(
        LISTS,
        paths.rel.parsed("{model}"),
        ("request_id",),
        "status == 'ok'",
        reason="reason",
        value="items",
        score=ItemScore(paths.rel.scores("{model}"), "f1", ("profile_id", "variant", "regime")),
    ),
    item_folders=("overlap",),
    report_entries={paths.rel.table("matcher_agreement", ""): "judge validation"},
    # The exposure audit's items (oncoeval.exposure): each profile's base text.
    exposure=ExposureSource(
        PREPARED["profiles"],
        "profile_id",
        "base",
        "radiation side-effect profiles",
        "patient profile",
    ),
    data_keys=data_keys,
    judge_roles=judge_roles,
    required_roles=required_roles,
    settings_problems=settings_problems,
    new_tokens=new_tokens,
    unit_scores=unit_scores,
    comparison_inputs=comparison_inputs,
)
