"""The rules' side of rules/cancer_myth.smk: result paths, declared outputs, what the config
checks and the report know of the study, and the input/param helpers (the verifier or jury, the
construction chain).

Every function takes the study block as common.smk filled it (``oncoeval.core.blocks.study_block``).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from ...core import blocks as oc
from ...core.errors import OncoEvalError
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
from .construct import check_inputs
from .data import load_myths
from .requests import load_verifier_examples

paths = ResultPaths("cancer_myth")
NAME = paths.study

HEADLINES = (
    # Raw and corrected for the verifier's measured error side by side; a correction the
    # validation set cannot support shows its reason in place of the value.
    # The corrected rates have no per-unit value: they are compared corrected to corrected
    # (corrected_comparison below), the validation set resampled once for both models.
    # PCS averages verdicts of -1, 0 and 1.
    Headline(
        "cancer_myth",
        paths.rel.table("pcs_pcr"),
        "PCS (raw judge verdicts)",
        "pcs",
        scale=(-1.0, 1.0),
        primary=True,
    ),
    Headline(
        "cancer_myth",
        paths.rel.table("pcs_pcr"),
        "PCS (corrected for judge error)",
        "pcs_corrected",
        per_unit=False,
        scale=(-1.0, 1.0),
    ),
    Headline(
        "cancer_myth", paths.rel.table("pcs_pcr"), "PCR (raw judge verdicts)", "pcr", kind="binary"
    ),
    Headline(
        "cancer_myth",
        paths.rel.table("pcs_pcr"),
        "PCR (corrected for judge error)",
        "pcr_corrected",
        per_unit=False,
    ),
)
PROMPTS = prompts_dir(paths.study)

ITEMS = paths("items.jsonl")
MYTHS = paths("construction", "myths.jsonl")
# Paired comparisons between models: the generic model_comparison table (rules/compare.smk).
TABLES = ("pcs_pcr", "pcs_by_category", "pcs_by_generator", "jury_agreement")
FIGURES = ("pcs_pcr", "pcs_by_category", "pcs_by_generator")
JUDGE_TABLES = ("judge_agreement", "judge_confusion", "judge_per_class")

# Outputs by rule: each rule declares `output: **OUTPUTS_<RULE>` and its script writes
# `snakemake.output[name]`, so a file's name is written here only.
OUTPUTS_PARSE = {"judged": paths("judged", "{model}.jsonl")}
OUTPUTS_SCORE = {"scores": paths.scores("{model}")}
OUTPUTS_AGGREGATE = paths.tables(*TABLES) | {
    f"{name}_figure": paths.figure(name) for name in FIGURES
}
OUTPUTS_JUDGE_AGREEMENT = paths.tables(*JUDGE_TABLES) | {
    "verifier_pairs": paths("validation", "verifier_pairs.tsv")
}
OUTPUTS_ADJUDICATION = {
    "adjudication_sheet": paths("adjudication", "sheet.tsv"),
    "adjudication_key": paths("adjudication", "key.tsv"),
}
# The construction's (opt-in, `construct: true`) outputs, kept apart from the evaluation's.
OUTPUTS_CONSTRUCTION = {
    "generated": paths("construction", "generated.jsonl"),
    "candidates": paths("construction", "candidates.jsonl"),
    "categories": paths("construction", "categories.jsonl"),
    "dataset": paths("construction", "dataset.json"),
    "balance": paths("construction", "balance.tsv"),
}
# The published outputs: scores of every evaluated model, the tables and figures, the
# adjudication sheet; the judge validation with human scores; the constructed dataset with
# `construct` (the candidates stay an intermediate file).
PUBLISHED_CONSTRUCTION = ("generated", "categories", "dataset", "balance")
OUTPUTS = (
    OUTPUTS_SCORE
    | OUTPUTS_AGGREGATE
    | OUTPUTS_ADJUDICATION
    | OUTPUTS_JUDGE_AGREEMENT
    | {name: OUTPUTS_CONSTRUCTION[name] for name in PUBLISHED_CONSTRUCTION}
)


def unused_outputs(block: dict) -> list[str]:
    unused = [] if block["human_scores"] else list(OUTPUTS_JUDGE_AGREEMENT)
    return unused + ([] if block["construct"] else list(PUBLISHED_CONSTRUCTION))


# The construction's data files, needed with `construct` only.
CONSTRUCTION_FILES = (
    "construction.myths",
    "construction.initial_valid",
    "construction.initial_invalid",
    "construction.classifier_examples",
)


def data_keys(block: dict) -> dict[str, bool]:
    keys = {"questions": True, "verifier_examples": True, "human_scores": False}
    if block["construct"]:
        keys |= dict.fromkeys(CONSTRUCTION_FILES, True)
    return keys


def comparison_inputs(config: dict) -> dict:
    """Inputs of the model comparison beside the scores: the verifier's validation pairs (for
    the corrected rates) when human scores are set."""
    if oc.study_block(config, NAME).get("human_scores"):
        return {"validation": OUTPUTS_JUDGE_AGREEMENT["verifier_pairs"]}
    return {}


def comparison_params(config: dict) -> dict:
    """What the corrected comparison depends on beside its inputs: the ids judged by a verifier
    of their own (not corrected by the study verifier's validation)."""
    return {"own_verifier": oc.study_block(config, NAME).get("verifier_for") or {}}


def corrected_comparison(score_paths: dict, inputs: dict, params: dict, settings):
    """Rows of the corrected PCS and PCR (oncoeval.workflow.comparison's hook): aggregate.corrected_rows."""
    from .aggregate import corrected_rows

    measures = {h.column: h.measure for h in HEADLINES if not h.per_unit}
    return corrected_rows(score_paths, inputs.get("validation"), params, settings, measures)


def unit_scores(score_path, inputs: dict):
    """Per question: the verifier score (PCS) and whether it is 1 (PCR); NaN: unscored."""
    import pandas as pd

    from .score import read_scores

    scores = read_scores(score_path)
    cluster = scores["cluster"] if "cluster" in scores else scores["question_id"]
    per = {"pcs": scores["score"], "pcr": (scores["score"] == 1).where(scores["score"].notna())}
    rows = [
        {"measure": h.measure, "unit": q, "cluster": c, "value": float(v)}
        for h in HEADLINES
        if h.per_unit
        for q, c, v in zip(scores["question_id"], cluster, per[h.column], strict=True)
    ]
    return pd.DataFrame(rows, columns=["measure", "unit", "cluster", "value"])


def judge_roles(block: dict) -> list[tuple[str, str]]:
    roles = [("judges.verifier", "verifier"), ("verifier_for", "verifier of one model")]
    if block["construct"]:
        roles += [
            ("judges.classifier", "construction classifier"),
            ("construction.generators", "construction generator"),
            ("construction.responder", "construction responder"),
        ]
    return roles


def required_roles(block: dict) -> list[tuple[str, str]]:
    need = [("judges.verifier", "the verifier scores every answer")]
    if block["construct"]:
        need += [
            ("judges.classifier", "construct is true (questions are categorised)"),
            ("construction.generators", "construct is true"),
        ]
    return need


def settings_problems(block: dict) -> list[str]:
    """What the schema cannot say about the block; with ``construct``, every construction input
    is loaded and checked, so a bad record stops the run before any model call."""
    problems = []
    if block["adjudicated"] and not block["human_scores"]:
        problems.append(
            f"studies.{NAME}.adjudicated: adjudicated labels join human_scores, which is not set; set "
            "human_scores too"
        )
    # The verifier's scored examples are a method file: checked with the data, before the
    # evaluated models are called (else a bad score stops the run at the verifier's requests).
    examples = block["verifier_examples"]
    if examples and Path(examples).exists() and not block["construct"]:
        try:
            load_verifier_examples(examples)
        except OncoEvalError as exc:
            problems.append(f"studies.{NAME}.verifier_examples: {exc}")
    if not block["construct"]:
        return problems
    if len(jurors(block)) > 1:
        problems.append(
            f"studies.{NAME}.judges.verifier: the construction loop routes each question by one verifier's "
            "score; name a single verifier when construct is true"
        )
    files = construction_inputs(block)
    if all(path and Path(path).exists() for path in files):  # else a data-key problem
        try:
            _checked(*files)
        except OncoEvalError as exc:
            problems.append(f"studies.{NAME}.construction: {exc}")
    return problems


def new_tokens(block: dict, requestset: str) -> int | None:
    """The new tokens a request of a verifier set (``verify--*``, its retries, ``validate``)
    or of the answer set asks for (``make estimate``); None for the construction loop's sets."""
    stage = requestset.split("--", 1)[0]
    if stage.startswith(("verify", "validate")):
        return block["verifier_max_new_tokens"]
    if stage == "answer":
        return block["answer_max_new_tokens"]
    return None


def jurors(block: dict) -> list[str]:
    """The verifier's model ids: one, or a jury."""
    return oc.judge_ids(block["judges"]["verifier"])


def jury_for(block: dict, jury: list[str], model: str) -> list[str]:
    """The verifier of one evaluated id's answers: ``verifier_for`` (e.g. stored verdicts that
    judge a replayed reference set) where it names one, else the study's verifier or jury."""
    own = (block.get("verifier_for") or {}).get(model)
    return [own] if own else list(jury)


def verifier_of_set(block: dict, verifier: str, stage: str, rest: str) -> str:
    """Who answered a verifier request set: ``verify--{model}`` goes to that model's own
    verifier (``jury_for``); every other set to the study's single verifier."""
    if stage == "verify":
        return jury_for(block, [verifier], rest.removeprefix("--"))[0]
    return verifier


def retry_set(stage: str, rest: str, juror: str, jury: list[str]) -> str:
    """Name of a juror's retry request set: ``{stage}-retry{rest}`` for a single verifier, and
    ``{stage}-retry-by-{juror}{rest}`` in a jury (each juror's retry quotes its own reply)."""
    by = f"-by-{juror}" if len(jury) > 1 else ""
    return f"{stage}-retry{by}{rest}"


def verdict_files(jury: list[str], stage: str, rest: str) -> dict:
    """Each juror's first and retry response files of one request set."""
    return {
        "first": [paths.responses(j, f"{stage}{rest}") for j in jury],
        "retry": [paths.responses(j, retry_set(stage, rest, j, jury)) for j in jury],
    }


def answer_verdict_files(block: dict, jury: list[str], model: str) -> dict:
    """The verdict files of one evaluated id's answers, from its own verifier (``jury_for``)."""
    return verdict_files(jury_for(block, jury, model), "verify", f"--{model}")


def construction_params(block: dict) -> dict:
    """What a construction step's output depends on (not the generator list)."""
    c = block["construction"]
    keys = ("m", "k_hard", "k_easy", "k_invalid", "seed", "generator_temperature")
    return {k: c[k] for k in keys} | {"generator_max_new_tokens": c["generator_max_new_tokens"]}


def responder_of(block: dict, generator: str) -> str:
    return block["construction"]["responder"] or generator


@cache
def _myth_count(path: str, max_myths) -> int:
    n = len(load_myths(path))
    return min(n, int(max_myths)) if max_myths else n


def myth_count(block: dict) -> int:
    c = block["construction"]
    return _myth_count(c["myths"], c["max_myths"])


def construction_inputs(block: dict) -> tuple:
    """The files the construction reads, in ``check_inputs``' order."""
    c = block["construction"]
    return (
        c["myths"],
        c["initial_valid"],
        c["initial_invalid"],
        block["verifier_examples"],
        c["classifier_examples"],
    )


@cache
def _checked(*files) -> dict:
    return check_inputs(*files)


def pools(generator: str, name: str) -> str:
    return paths("construction", generator, "pools", f"{name}.json")


def steps(generator: str, index) -> str:
    """The records of one construction step (myth ``index`` of one generator)."""
    return paths("construction", generator, "steps", f"m{index}.jsonl")


def pools_before(generator: str, index: int) -> str:
    if int(index) == 0:
        return pools(generator, "init")
    return pools(generator, f"m{int(index) - 1}")


def construct_set(generator, index, step: str) -> str:
    """A construction step's request set: construct-{generator}-m{index}-{step}."""
    return f"construct-{generator}-m{index}-{step}"


def final_steps(block: dict) -> list[str]:
    n = myth_count(block)
    return [steps(g, i) for g in block["construction"]["generators"] for i in range(n)]


def final_pools(block: dict) -> list[str]:
    n = myth_count(block)
    return [pools(g, f"m{n - 1}") for g in block["construction"]["generators"]]


# What the report, the summary, the comparison and the config checks know of the study.
_BARS = (
    "bars are means with 95% CIs (the tables' intervals, whole clusters resampled) as error "
    "bars, each labelled with its value and n"
)
_VALIDATION = "validation answer"

STUDY = Study(
    name=NAME,
    title="Cancer-Myth (false-presupposition questions)",
    paths=paths,
    outputs=outputs(
        OUTPUTS,
        {
            "pcs_pcr": {
                "caption": "Presupposition correction score (PCS) and rate (PCR) per model."
            },
            "pcs_by_category": {"caption": "PCS and PCR by myth category."},
            "pcs_by_generator": {
                "caption": "PCS and PCR by the model that generated the question."
            },
            "judge_agreement": {
                "caption": "Agreement of the verifier judge with human scores.",
                "unit": _VALIDATION,
            },
            "judge_per_class": {
                "caption": "Verifier sensitivity and specificity per score against human scores.",
                "unit": _VALIDATION,
            },
            "jury_agreement": {
                "caption": "Agreement among the jurors of a verifier jury (Fleiss' κ)."
            },
            "judge_confusion": {
                "caption": "Verifier verdicts against human scores (confusion matrix).",
                "unit": "none (counts)",
            },
            "scores": {
                "caption": "Per-question scores of {name}: the verifier's verdict (-1, 0 or 1), "
                "its reason and any parse error, with the question's category, cluster and "
                "generator model."
            },
            "pcs_pcr_figure": {
                "caption": "PCS (-1 to 1) and PCR (0 to 1) per model from the raw judge "
                f"verdicts: {_BARS} (questions scored)."
            },
            "pcs_by_category_figure": {
                "caption": "PCS per myth category and model from the raw judge verdicts: "
                f"{_BARS} (questions)."
            },
            "pcs_by_generator_figure": {
                "caption": "Mean PCS of each responder (columns) on the questions each "
                "generator model wrote (rows), one number per cell; 'unscored' where no answer "
                "of the cell was scored."
            },
        },
    ),
    # Questions written from one source record (a myth: source_type and source_row) share their
    # context and are resampled together; a question without one (source_row -1 or none, as the
    # published file marks hand-written questions) is its own cluster.
    resampling=Resampling(unit="question", cluster="source record (myth) it was written from"),
    headlines=HEADLINES,
    # The answers are free text: what parses (or not) is the verifier's verdict on each.
    answers=Answers(
        "answer",
        "judged/{model}.jsonl",
        ("question_id",),
        "parse_error == ''",
        reason="parse_error",
        score=ItemScore(paths.rel.scores("{model}"), "score", ("question_id",)),
        verdict=("score", "reason"),
    ),
    report_entries={"construction": "construction"},
    # The exposure audit's items (oncoeval.exposure): each question, named as the dataset is.
    # Released: the Cancer-Myth paper and dataset (Zhu et al.) have been public since April 2025.
    exposure=ExposureSource(
        ITEMS,
        "question_id",
        "question",
        "Cancer-Myth",
        "patient question",
        "2025-04 (Zhu et al., Cancer-Myth)",
    ),
    data_keys=data_keys,
    judge_roles=judge_roles,
    required_roles=required_roles,
    settings_problems=settings_problems,
    new_tokens=new_tokens,
    unused_outputs=unused_outputs,
    unit_scores=unit_scores,
    comparison_inputs=comparison_inputs,
    comparison_params=comparison_params,
    corrected_comparison=corrected_comparison,
)
