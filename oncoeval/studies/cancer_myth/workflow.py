"""The rules' side of rules/cancer_myth.smk: result paths, declared outputs, final targets, and
the input/param helpers (the verifier or jury, the construction chain).

Every function takes the study block as common.smk filled it (``config["studies"]["cancer_myth"]``).
"""

from __future__ import annotations

from functools import cache

from ... import config as oc
from ...errors import ConfigError
from ..contract import Headline, Resampling, ResultPaths, prompts_dir
from .construct import check_inputs
from .data import load_myths

paths = ResultPaths("cancer_myth")

# For the report and the summary (oncoeval.report): the study's category title, what its
# bootstrap resamples, and its headline measures per model.
REPORT_TITLE = "Cancer-Myth (false-presupposition questions)"
# Questions written from one source record (a myth: source_type and source_row) share their
# context and are resampled together; a question without one (source_row -1 or none, as the
# published file marks hand-written questions) is its own cluster.
RESAMPLING = Resampling(unit="question", cluster="source record (myth) it was written from")
HEADLINES = (
    # Raw and corrected for the verifier's measured error side by side; a correction the
    # validation set cannot support shows its reason in place of the value.
    # The corrected rates have no per-unit value: they are compared corrected to corrected
    # (corrected_comparison below), the validation set resampled once for both models.
    Headline("cancer_myth", "tables/pcs_pcr.tsv", "PCS (raw judge verdicts)", "pcs"),
    Headline(
        "cancer_myth",
        "tables/pcs_pcr.tsv",
        "PCS (corrected for judge error)",
        "pcs_corrected",
        per_unit=False,
    ),
    Headline("cancer_myth", "tables/pcs_pcr.tsv", "PCR (raw judge verdicts)", "pcr", kind="binary"),
    Headline(
        "cancer_myth",
        "tables/pcs_pcr.tsv",
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


def _tables(names) -> dict[str, str]:
    """Each table as TSV (``name``) and Markdown (``name_md``)."""
    out = {}
    for name in names:
        out[name] = paths.table(name)
        out[f"{name}_md"] = paths("tables", f"{name}.md")
    return out


# Outputs by rule: each rule declares `output: **OUTPUTS_<RULE>` and its script writes
# `snakemake.output[name]`, so a file's name is written here only.
OUTPUTS_PARSE = {"judged": paths("judged", "{model}.jsonl")}
OUTPUTS_SCORE = {"scores": paths.scores("{model}")}
OUTPUTS_AGGREGATE = _tables(TABLES) | {f"{name}_figure": paths.figure(name) for name in FIGURES}
OUTPUTS_JUDGE_AGREEMENT = _tables(JUDGE_TABLES) | {
    "verifier_pairs": paths("validation", "verifier_pairs.tsv")
}
OUTPUTS_ADJUDICATION = {
    "adjudication_sheet": paths("adjudication", "sheet.tsv"),
    "adjudication_key": paths("adjudication", "key.tsv"),
}
OUTPUTS = (
    OUTPUTS_PARSE
    | OUTPUTS_SCORE
    | OUTPUTS_AGGREGATE
    | OUTPUTS_JUDGE_AGREEMENT
    | OUTPUTS_ADJUDICATION
)
# The construction's (opt-in, `construct: true`) outputs, kept apart from the evaluation's.
OUTPUTS_CONSTRUCTION = {
    "generated": paths("construction", "generated.jsonl"),
    "candidates": paths("construction", "candidates.jsonl"),
    "categories": paths("construction", "categories.jsonl"),
    "dataset": paths("construction", "dataset.json"),
    "balance": paths("construction", "balance.tsv"),
}


def comparison_inputs(config: dict) -> dict:
    """Inputs of the model comparison beside the scores: the verifier's validation pairs (for
    the corrected rates) when human scores are set."""
    if config["studies"]["cancer_myth"]["human_scores"]:
        return {"validation": OUTPUTS_JUDGE_AGREEMENT["verifier_pairs"]}
    return {}


def comparison_params(config: dict) -> dict:
    """What the corrected comparison depends on beside its inputs: the ids judged by a verifier
    of their own (not corrected by the study verifier's validation)."""
    return {"own_verifier": config["studies"]["cancer_myth"]["verifier_for"] or {}}


def corrected_comparison(score_paths: dict, inputs: dict, params: dict, settings):
    """Rows of the corrected PCS and PCR (oncoeval.compare's hook): aggregate.corrected_rows."""
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


def final_targets(config: dict) -> list[str]:
    """Scores of every evaluated model, the tables and figures, the adjudication sheet; the
    judge validation with human scores; the constructed dataset with ``construct``."""
    block = config["studies"]["cancer_myth"]
    targets = [paths.scores(m) for m in oc.study_evaluated_models(config, "cancer_myth")]
    targets += list(OUTPUTS_AGGREGATE.values()) + list(OUTPUTS_ADJUDICATION.values())
    if block["human_scores"]:
        targets += list(OUTPUTS_JUDGE_AGREEMENT.values())
    if block["construct"]:
        targets += [
            OUTPUTS_CONSTRUCTION[k] for k in ("generated", "categories", "dataset", "balance")
        ]
    return targets


def check_settings(block: dict) -> None:
    """What the schema cannot say about the block."""
    if block["adjudicated"] and not block["human_scores"]:
        raise ConfigError(
            "studies.cancer_myth.adjudicated: adjudicated labels join human_scores, which is "
            "not set; set human_scores too"
        )


def jurors(block: dict) -> list[str]:
    """The verifier's model ids: one, or a jury."""
    judges = block["judges"]
    ids = oc.judge_ids(judges["verifier"])
    if isinstance(judges["classifier"], list):
        raise ConfigError("studies.cancer_myth.judges.classifier: name one model, not a list")
    if len(ids) > 1 and block["construct"]:
        raise ConfigError(
            "studies.cancer_myth.judges.verifier: the construction loop routes each question by "
            "one verifier's score; name a single verifier when construct is true"
        )
    return ids


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


def check_construction_inputs(block: dict) -> dict:
    """Every construction input loaded and checked when the workflow starts (see check_inputs)."""
    c = block["construction"]
    files = {
        "construction.myths": c["myths"],
        "construction.initial_valid": c["initial_valid"],
        "construction.initial_invalid": c["initial_invalid"],
        "verifier_examples": block["verifier_examples"],
        "construction.classifier_examples": c["classifier_examples"],
    }
    unset = [key for key, path in files.items() if not path]
    if unset:
        raise ConfigError(f"studies.cancer_myth.{unset[0]} must name a file for the construction")
    return _checked(*files.values())


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
