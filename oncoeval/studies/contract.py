"""The shape every study has, so that a reader who knows one study knows them all.

A study ``s`` is:

- ``oncoeval/studies/s/``: ``workflow.py`` (the rules' side: ``paths``, ``OUTPUTS``, what the
  config checks and the report need to know of the study, and the per-rule input/param helpers)
  and one module per stage, ``prepare.py``, ``requests.py``, ``parse.py``, ``score.py``,
  ``aggregate.py``, plus whatever helpers the study needs (metrics, prompts, ...).
- ``rules/s.smk`` with the rules ``s_prepare``, ``s_requests``, ``s_parse``, ``s_score`` and
  ``s_aggregate`` (judge steps: ``s_<judge>_requests``, then ``s_<judge>_parse`` where the
  verdicts are read in a step of their own), each running ``scripts/s/<stage>.py``. A rule file
  imports the study's workflow module as ``s_wf`` and reads the study block once, as ``S``
  (``oncoeval.config.study_block``).
- ``config/schemas/s.schema.yaml``: every setting and its default. The workflow fills the
  defaults once (``oncoeval.config.filled_study_block``); the package reads the filled block and
  repeats no default.
- ``config/prompts/s/`` (templates read by file name, never named by a config key) and
  ``tests/s/``.

What ``workflow.py`` declares (read by name, generically, by ``oncoeval.config`` and
``oncoeval.report``, which name no study):

- ``OUTPUTS``: every file the study publishes (its final targets), by name. ``{model}`` stands
  for each evaluated model; any other wildcard is filled by ``target_wildcards(block, models)``, and
  ``unused_outputs(block)`` names the outputs a run's settings leave out. Intermediate files
  (prepared items, request sets, parsed answers) are declared beside it, not in it.
- ``REPORT_TITLE``, ``RESAMPLING`` and ``HEADLINES`` (required), ``unit_scores`` and
  ``comparison_inputs`` (the model comparison's, oncoeval.compare), and where a study adds
  comparison rows of its own ``corrected_comparison(score_paths, inputs, params, settings)``
  (those rows, value rows and notes: Cancer-Myth's corrected PCS and PCR) with
  ``comparison_params(config)`` (what they depend on beside their inputs); ``ANSWERS``
  (``Answers``: the request set the models answer and where its parsed answers, scores and
  verdicts are read, for the summary's shares and each model's item page); ``CAPTIONS`` (table
  or figure name -> what it shows), ``FIGURE_CAPTIONS`` (figure name or a pattern such as
  ``roc_*`` -> what it shows and how it was drawn), ``FIGURE_TABLES`` (figure name or pattern ->
  the table it draws, where its n is counted; by default the table of its name), ``UNITS`` (name
  -> the resampling unit where it is not the study's), ``ITEM_FOLDERS`` (folders of per-model
  per-item tables besides ``scores/``), ``REPORT_ENTRIES`` (further result folders or files the
  report shows -> their subcategory), and ``REPORT_TEXT_COLUMNS`` / ``REPORT_LABEL_COLUMNS``
  (column names the report takes for free text, or for labels, when the inputs are marked
  ``contains_phi``; oncoeval.report.phi).
- ``data_keys(block)``: data keys -> True when the run cannot do without it; ``judge_roles(block)``:
  the model-naming keys whose models the run calls, with a label; ``required_roles(block)``: the
  keys among them that must name a model, with the reason; ``settings_problems(block)``: what the
  schema cannot say about the block; ``prompt_templates(block)``: the templates a run reads, where
  its settings choose among them (provenance hashes those); ``new_tokens(block, requestset)``:
  the new tokens each request of a set still to be built asks for (``make estimate`` bounds a
  judge's answers by it; without it, by the block's largest ``*max_new_tokens`` setting). Each
  is optional (a study without judges declares none). ``EXPOSURE``
  (``oncoeval.exposure.source.ExposureSource``: the prepared items the exposure audit probes,
  their id and text keys, the dataset's name and release date; its schema then has the
  ``exposure`` block).
- One study's own names that one reader outside it uses: Cancer-Myth's ``OUTPUTS_PARSE`` (the
  verifier's judged answers) and ``OUTPUTS_JUDGE_AGREEMENT`` (its validation pairs), which its
  review plan (``oncoeval.review.studies``) reads.
"""

from __future__ import annotations

import importlib
import itertools
import re
from dataclasses import dataclass
from types import ModuleType

from ..core.layout import ResultPaths  # noqa: F401  (a study's paths: its workflow.py imports it here)
from ..core.source import source_file

STAGES = ("prepare", "requests", "parse", "score", "aggregate")
# The package modules every study has: the rules' side, then one per stage.
MODULES = ("workflow", *STAGES)


def prompts_dir(study: str) -> str:
    """The folder of a study's prompt templates (its stages read them by name), in the
    workflow's source wherever the run is (oncoeval.source)."""
    return source_file(f"config/prompts/{study}")


@dataclass(frozen=True)
class Headline:
    """One headline measure of a study, as the summary (results/summary.tsv) shows it per model.

    A study declares its own as ``HEADLINES`` in its ``workflow.py``. Each is also compared
    between models (oncoeval.compare: results/{study}/tables/model_comparison.tsv and
    leaderboard.tsv) from the per-unit values the study's ``unit_scores`` gives, unless
    ``per_unit`` is False (a statistic of the whole set, such as an AUROC). Higher is better:
    the leaderboard ranks the highest value first. ``kind`` and ``scale`` choose its intervals
    and test; the ``primary`` headline's pairs of models are the study's adjusted family.
    """

    study: str
    table: str  # under results/{study}/
    measure: str  # as the summary names it
    column: str  # value column; its interval is {column}_ci_low/_ci_high
    where: tuple = ()  # (column, value) pairs selecting the rows of the published view
    # per-unit value: "mean" (a bounded score on ``scale``) or "binary" (a 0/1 outcome): the
    # interval and the test follow this declaration, never the values a sample holds
    kind: str = "mean"
    per_unit: bool = True  # False: no per-unit value, so not compared between models
    scale: tuple = (0.0, 1.0)  # the range a value can take (exports state it with the value)
    # The study's primary measure: its pairs of models are the adjusted family of the verdicts;
    # the other measures are descriptive (one per study; else the first compared headline).
    primary: bool = False


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


def workflow_of(study: str) -> ModuleType:
    """The study's ``workflow.py``."""
    return importlib.import_module(f"oncoeval.studies.{study}.workflow")


def declared(study: str, name: str, default=None):
    """What a study's ``workflow.py`` declares under ``name``, else ``default``."""
    return getattr(workflow_of(study), name, default)


def _declared_call(study: str, name: str, block: dict, default):
    function = declared(study, name)
    return default if function is None else function(block)


def _token_settings(block) -> list[int]:
    """Every ``*max_new_tokens`` value in a study block, nested blocks included."""
    found = []
    for key, value in (block or {}).items():
        if isinstance(value, dict):
            found += _token_settings(value)
        elif key.endswith("max_new_tokens") and isinstance(value, int):
            found.append(value)
    return found


def new_tokens(study: str, block: dict, requestset: str) -> int | None:
    """The new tokens each request of ``requestset`` asks for, as the study builds it: its
    ``new_tokens`` declaration, else the largest token setting of its block (a bound); None
    when the block sets none."""
    function = declared(study, "new_tokens")
    declared_value = function(block, requestset) if function is not None else None
    if declared_value is not None:
        return int(declared_value)
    return max(_token_settings(block), default=None)


def data_keys(study: str, block: dict) -> dict[str, bool]:
    """The study's data keys (dotted, inside its block): True when the run needs it."""
    return dict(_declared_call(study, "data_keys", block, {}))


def judge_roles(study: str, block: dict) -> list[tuple[str, str]]:
    """(dotted key, role) of each model-naming key besides ``evaluate`` whose models the run calls."""
    return list(_declared_call(study, "judge_roles", block, []))


def required_roles(study: str, block: dict) -> list[tuple[str, str]]:
    """(dotted key, why) of each model-naming key the run needs filled in."""
    return list(_declared_call(study, "required_roles", block, []))


def settings_problems(study: str, block: dict) -> list[str]:
    """What the schema cannot say about the study block, each naming its key in full
    (``studies.<study>.<key>: ...``)."""
    return list(_declared_call(study, "settings_problems", block, []))


def prompt_files(study: str, block: dict) -> list[str]:
    """The prompt templates a run of the study reads: its ``prompt_templates(block)`` where it
    declares one (a study whose settings choose among templates), else its whole folder."""
    return list(_declared_call(study, "prompt_templates", block, [prompts_dir(study)]))


def final_targets(study: str, block: dict, models: list[str]) -> list[str]:
    """The study's final targets: its ``OUTPUTS`` but those ``unused_outputs`` names, each
    wildcard filled: ``{model}`` with every evaluated model, others by ``target_wildcards``."""
    wildcards = declared(study, "target_wildcards")
    values = {"model": list(models), **(wildcards(block, models) if wildcards else {})}
    unused = set(_declared_call(study, "unused_outputs", block, ()))
    targets = []
    for name, path in declared(study, "OUTPUTS").items():
        if name in unused:
            continue
        keys = re.findall(r"{(\w+)}", path)
        for combo in itertools.product(*(values[key] for key in keys)):
            targets.append(path.format(**dict(zip(keys, combo, strict=True))))
    return targets


@dataclass(frozen=True)
class ItemScore:
    """The per-item score an item page shows beside each answer: ``column`` of a per-model
    table (``{model}`` in ``table``), its rows selected by ``where`` and averaged over the rows
    of one answer (or of the unit, e.g. a patient, that ``keys`` name)."""

    table: str
    column: str
    keys: tuple
    where: str = ""
    # (column, sentence): the table's boolean column marking a row whose score is credited by
    # the study's rule rather than earned by what parsed, and what the item page says of it
    credited: tuple = ()


@dataclass(frozen=True)
class Answers:
    """The answers every evaluated model gives in a study, and how their parse is read: what
    the summary counts per model (answers cut at the token cap, answers with nothing parsed,
    failed and filtered calls) and what each model's item page shows in one row per answer.
    A study declares its own as ``ANSWERS`` in its ``workflow.py``.

    An answer's value of a key column is its request's ``meta`` field of that name, else (for
    a single key) its ``request_id``.
    """

    requestset: str  # the request set every evaluated model answers
    parsed: str  # the per-model parse table under results/{study}/, with {model}
    keys: tuple  # its columns naming one answer
    ok: str  # a pandas query selecting rows that hold something parsed
    reason: str = ""  # its column saying why a row holds nothing
    value: str = ""  # its column holding what was parsed
    score: ItemScore | None = None
    verdict: tuple = ()  # its columns holding a judge's verdict and reason (judged studies)
