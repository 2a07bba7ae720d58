"""Helpers for rules/cancer_myth.smk: settings with defaults, paths, and the construction chain."""

from __future__ import annotations

from functools import cache

from ...errors import ConfigError
from .construct import check_inputs
from .data import load_myths

R = "results/cancer_myth"

DEFAULTS = {
    "questions": None,
    "system_prompt": None,
    "answer_max_new_tokens": 1000,
    "verifier_examples": "resources/method/cancer_myth/verifier_examples.json",
    "verifier_max_new_tokens": 256,
    "structured_verdicts": True,
    "jury_combine": "majority",
    "adjudication": {"max_items": 50, "seed": 0},
    "adjudicated": None,
    "human_scores": None,
    "multiple_testing": "holm",
    "construct": False,
}
CONSTRUCTION_DEFAULTS = {
    "myths": None,
    "max_myths": None,
    "generators": [],
    "responder": None,
    "initial_valid": "resources/method/cancer_myth/initial_valid.json",
    "initial_invalid": "resources/method/cancer_myth/initial_invalid.json",
    "m": 3,
    "k_hard": 6,
    "k_easy": 2,
    "k_invalid": 4,
    "seed": 0,
    "generator_temperature": 0.7,
    "generator_max_new_tokens": 1000,
    "classifier_examples": "resources/method/cancer_myth/classifier_examples.json",
    "classifier_max_new_tokens": 128,
    "select_per_model": 300,
    "select_per_category": 50,
}
PROMPTS = "config/prompts/cancer_myth"
TABLES = ("pcs_pcr", "pcs_by_category", "pcs_by_generator", "pairwise", "jury_agreement")
FIGURES = ("pcs_pcr", "pcs_by_category", "pcs_by_generator")


def settings(config: dict) -> dict:
    """The study block with every default filled in (construction block included)."""
    block = dict((config.get("studies") or {}).get("cancer_myth") or {})
    for key, value in DEFAULTS.items():
        block.setdefault(key, value)
    construction = dict(CONSTRUCTION_DEFAULTS)
    construction.update(block.get("construction") or {})
    block["construction"] = construction
    if block.get("adjudicated") and not block.get("human_scores"):
        raise ConfigError(
            "studies.cancer_myth.adjudicated: adjudicated labels join human_scores, which is "
            "not set; set human_scores too"
        )
    return block


def jurors(block: dict) -> list[str]:
    """The verifier's model ids: one, or a jury."""
    value = (block.get("judges") or {}).get("verifier")
    ids = [value] if isinstance(value, str) else list(value or [])
    classifier = (block.get("judges") or {}).get("classifier")
    if isinstance(classifier, list):
        raise ConfigError("studies.cancer_myth.judges.classifier: name one model, not a list")
    if len(ids) > 1 and block.get("construct"):
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
        "first": [f"{R}/responses/{j}/{stage}{rest}.jsonl" for j in jury],
        "retry": [f"{R}/responses/{j}/{retry_set(stage, rest, j, jury)}.jsonl" for j in jury],
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
    paths = {
        "construction.myths": c["myths"],
        "construction.initial_valid": c["initial_valid"],
        "construction.initial_invalid": c["initial_invalid"],
        "verifier_examples": block["verifier_examples"],
        "construction.classifier_examples": c["classifier_examples"],
    }
    unset = [key for key, path in paths.items() if not path]
    if unset:
        raise ConfigError(f"studies.cancer_myth.{unset[0]} must name a file for the construction")
    return _checked(*paths.values())


@cache
def _checked(*paths) -> dict:
    return check_inputs(*paths)


def pools_before(generator: str, index: int) -> str:
    if int(index) == 0:
        return f"{R}/construction/{generator}/pools/init.json"
    return f"{R}/construction/{generator}/pools/m{int(index) - 1}.json"


def construction_targets(block: dict) -> list[str]:
    return [
        f"{R}/construction/generated.jsonl",
        f"{R}/construction/categories.jsonl",
        f"{R}/construction/dataset.json",
        f"{R}/construction/balance.tsv",
    ]


def final_steps(block: dict) -> list[str]:
    n = myth_count(block)
    return [
        f"{R}/construction/{g}/steps/m{i}.jsonl"
        for g in block["construction"]["generators"]
        for i in range(n)
    ]


def final_pools(block: dict) -> list[str]:
    n = myth_count(block)
    return [
        f"{R}/construction/{g}/pools/m{n - 1}.json" for g in block["construction"]["generators"]
    ]
