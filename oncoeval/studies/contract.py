"""The shape every study has, so that a reader who knows one study knows them all.

A study ``s`` is:

- ``oncoeval/studies/s/``: ``workflow.py`` (the rules' side: ``paths``, ``OUTPUTS``,
  ``final_targets(config)`` and the per-rule input/param helpers) and one module per stage,
  ``prepare.py``, ``requests.py``, ``parse.py``, ``score.py``, ``aggregate.py``, plus whatever
  helpers the study needs (metrics, prompts, ...).
- ``rules/s.smk`` with the rules ``s_prepare``, ``s_requests``, ``s_parse``, ``s_score`` and
  ``s_aggregate`` (judge steps: ``s_<judge>_requests``, then ``s_<judge>_parse`` where the
  verdicts are read in a step of their own), each running ``scripts/s/<stage>.py``.
- ``config/schemas/s.schema.yaml``: every setting and its default. The workflow fills the
  defaults once (``oncoeval.config.filled_study_block``); the package reads the filled block and
  repeats no default.
- ``config/prompts/s/`` and ``tests/s/``.
"""

from __future__ import annotations

from dataclasses import dataclass

STAGES = ("prepare", "requests", "parse", "score", "aggregate")
# The package modules every study has: the rules' side, then one per stage.
MODULES = ("workflow", *STAGES)


def prompts_dir(study: str) -> str:
    """The folder of a study's prompt templates (its stages read them by name)."""
    return f"config/prompts/{study}"


class ResultPaths:
    """Paths under ``results/<study>/``: the one place a study's result paths are built.

    Strings, since Snakemake rules take strings; wildcards are passed through as written, e.g.
    ``paths.scores("{model}")``.
    """

    def __init__(self, study: str):
        self.study = study
        self.root = f"results/{study}"

    def __call__(self, *parts: str) -> str:
        return "/".join((self.root, *parts))

    def prepared(self, name: str) -> str:
        return self("prepared", name)

    def requests(self, requestset: str) -> str:
        return self("requests", f"{requestset}.jsonl")

    def responses(self, model: str, requestset: str) -> str:
        return self("responses", model, f"{requestset}.jsonl")

    def parsed(self, model: str, suffix: str = "jsonl") -> str:
        return self("parsed", f"{model}.{suffix}")

    def scores(self, model: str) -> str:
        return self("scores", f"{model}.tsv")

    def table(self, name: str) -> str:
        return self("tables", f"{name}.tsv")

    def figure(self, name: str) -> str:
        return self("figures", f"{name}.png")

    def log(self, *parts: str) -> str:
        return "/".join(("logs", self.study, *parts)) + ".log"


@dataclass(frozen=True)
class Headline:
    """One headline measure of a study, as the summary (results/summary.tsv) shows it per model.

    A study declares its own as ``HEADLINES`` in its ``workflow.py``. Each is also compared
    between models (oncoeval.compare: results/{study}/tables/model_comparison.tsv and
    leaderboard.tsv) from the per-unit values the study's ``unit_scores`` gives, unless
    ``per_unit`` is False (a statistic of the whole set, such as an AUROC). Higher is better:
    the leaderboard ranks the highest value first.
    """

    study: str
    table: str  # under results/{study}/
    measure: str  # as the summary names it
    column: str  # value column; its interval is {column}_ci_low/_ci_high
    where: tuple = ()  # (column, value) pairs selecting the rows of the published view
    # per-unit value: "mean" (a bounded score) or "binary" (a 0/1 outcome); the comparison
    # treats any sample of only 0s and 1s as binary (Wilson interval, exact McNemar)
    kind: str = "mean"
    per_unit: bool = True  # False: no per-unit value, so not compared between models


@dataclass(frozen=True)
class Resampling:
    """What a study's intervals resample: the unit that carries one value per model and
    measure, and the cluster of units that share a context (resampled and permuted whole).

    A study declares its own as ``RESAMPLING`` in its ``workflow.py``.
    """

    unit: str  # e.g. "question"
    cluster: str  # e.g. "myth the question was written from"; the unit itself when independent

    def __str__(self) -> str:
        if self.cluster == self.unit:
            return self.unit
        return f"{self.unit}, resampled in whole clusters ({self.cluster})"


# The per-unit values a study's ``unit_scores(score_path, inputs)`` returns for one model: one
# row per headline measure and unit; value NaN where the unit is unscored; cluster the id of the
# unit's cluster (the unit's own id when it has none).
UNIT_SCORE_COLUMNS = ("measure", "unit", "cluster", "value")
