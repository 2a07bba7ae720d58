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
  (``oncoeval.core.blocks.study_block``).
- ``config/schemas/s.schema.yaml``: every setting and its default. The workflow fills the
  defaults once (``oncoeval.config.checks.filled_study_block``); the package reads the filled block and
  repeats no default.
- ``config/prompts/s/`` (templates read by file name, never named by a config key) and
  ``tests/s/``.

What ``workflow.py`` declares, for ``oncoeval.config``, ``oncoeval.report``,
``oncoeval.workflow.comparison``, the exports, the exposure audit and the review (which name no study): one
value, ``STUDY = Study(...)``, its last statement, loaded by :func:`study` (the one place a
study's module is loaded). A misspelt field is a TypeError when the module is imported. The
fields of ``Study``:

- ``name``: the study's id, as registered in ``oncoeval.studies.STUDIES``.
- ``title``: the report's category title, e.g. "CORAL (oncology note extraction)"; the part
  before " (" names the study on pages and tables.
- ``paths``: its ``ResultPaths`` (oncoeval.core.layout).
- ``outputs``: every file the study publishes (its final targets), by name, each an ``Output``
  (built by :func:`outputs` from the rules' name -> path mapping). ``{model}`` stands for each
  evaluated model; any other wildcard is filled by the ``target_wildcards`` hook, and
  ``unused_outputs`` names the outputs a run's settings leave out. Intermediate files (prepared
  items, request sets, parsed answers) are declared beside it in ``workflow.py``, not in it.
  The fields of ``Output``:

  - ``path``: the file, ``results/{study}/...``.
  - ``caption``: what the report says it shows (a figure: also how it was drawn); ``{name}``
    stands for the file's stem (the model of a per-model file). Without one the report builds
    a caption from the file's name.
  - ``unit``: the resampling unit of its intervals, where it is not the study's
    ``resampling.unit`` ("none (why)": no intervals).
  - ``table``: a figure's table (its name under ``tables/``), where its n is counted; by
    default the table of the figure's own name.

- ``resampling``: ``Resampling``, what its intervals resample (the unit and its cluster).
- ``headlines``: ``Headline`` values, its headline measures per model (the summary, the
  leaderboard, the exports), each with its table, value column, the rows of its published view,
  the table's ``n_column`` and ``unscored`` column, the kind and range of a per-unit value, and
  ``primary`` on the measure whose pairs of models are the adjusted family.
- ``summary_note``: a sentence the summary's note adds about the study's headlines ("" for none).
- ``answers``: ``Answers``, the request set the models answer and where its parsed answers,
  scores and verdicts are read (the summary's shares and each model's item page); None for none.
- ``item_folders``: folders of per-model per-item tables besides ``scores/``.
- ``report_entries``: further result folders or files (without suffix) the report shows ->
  their subcategory.
- ``text_columns`` / ``label_columns``: column names the report takes for free text, or for
  labels, when the inputs are marked ``contains_phi`` (oncoeval.report.phi).
- ``exposure``: ``ExposureSource``, the prepared items the exposure
  audit probes, their id and text keys, the dataset's name and release date (its schema then
  has the ``exposure`` block); None for a study that cannot be audited.
- Hooks, each a function or None (a study without judges declares none of those):
  ``data_keys(block)``: data keys -> True when the run cannot do without it;
  ``judge_roles(block)``: the model-naming keys whose models the run calls, with a label;
  ``required_roles(block)``: the keys among them that must name a model, with the reason;
  ``settings_problems(block)``: what the schema cannot say about the block;
  ``prompt_templates(block)``: the templates a run reads, where its settings choose among them
  (provenance hashes those; else the whole prompt folder); ``new_tokens(block, requestset)``:
  the new tokens each request of a set still to be built asks for (``make estimate`` bounds a
  judge's answers by it; without it, by the block's largest ``*max_new_tokens`` setting);
  ``target_wildcards(block, models)`` and ``unused_outputs(block)`` (the final targets, above);
  ``unit_scores(score_path, inputs)`` (one row per headline measure and unit:
  ``UNIT_SCORE_COLUMNS``) and ``comparison_inputs(config)`` (the files it reads beside the
  scores), required, for the model comparison (oncoeval.workflow.comparison); where a study adds comparison
  rows of its own ``corrected_comparison(score_paths, inputs, params, settings)`` (those rows,
  value rows and notes: Cancer-Myth's corrected PCS and PCR) with ``comparison_params(config)``
  (what they depend on beside their inputs).

The rules read ``workflow.py``'s other names directly (its per-rule ``OUTPUTS_<RULE>`` mappings
and input/param helpers); nothing else does.
"""

from __future__ import annotations

import functools
import importlib
import itertools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ..core.layout import ResultPaths
from ..core.source import source_file

STAGES = ("prepare", "requests", "parse", "score", "aggregate")
# The package modules every study has: the rules' side, then one per stage.
MODULES = ("workflow", *STAGES)


def prompts_dir(study: str) -> str:
    """The folder of a study's prompt templates (its stages read them by name), in the
    workflow's source wherever the run is (oncoeval.core.source)."""
    return source_file(f"config/prompts/{study}")


@dataclass(frozen=True)
class Headline:
    """One headline measure of a study, as the summary (results/summary.tsv) shows it per model.

    A study declares its own in its ``Study.headlines``. Each is also compared
    between models (oncoeval.workflow.comparison: results/{study}/tables/model_comparison.tsv and
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
    n_column: str = "n"  # the table's column counting the value's units
    # the table's column counting the units left unscored; a pattern (``invalid_*``): the sum
    # of its columns
    unscored: str = "n_unscored"
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

    A study declares its own as its ``Study.resampling``.
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


def study(name: str) -> Study:
    """The declaration of study ``name``: ``STUDY`` of ``oncoeval.studies.{name}.workflow``.
    The one place a study's module is loaded (tests/spine/test_study_contract.py checks it)."""
    module = importlib.import_module(f"oncoeval.studies.{name}.workflow")
    declared = getattr(module, "STUDY", None)
    if not isinstance(declared, Study) or declared.name != name:
        raise TypeError(f"oncoeval/studies/{name}/workflow.py: STUDY is not the Study of {name}")
    return declared


def _hook(name: str, hook: str, block: dict, default):
    function = getattr(study(name), hook)
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


def new_tokens(name: str, block: dict, requestset: str) -> int | None:
    """The new tokens each request of ``requestset`` asks for, as the study builds it: its
    ``new_tokens`` hook, else the largest token setting of its block (a bound); None when the
    block sets none."""
    function = study(name).new_tokens
    declared_value = function(block, requestset) if function is not None else None
    if declared_value is not None:
        return int(declared_value)
    return max(_token_settings(block), default=None)


def data_keys(name: str, block: dict) -> dict[str, bool]:
    """The study's data keys (dotted, inside its block): True when the run needs it."""
    return dict(_hook(name, "data_keys", block, {}))


def judge_roles(name: str, block: dict) -> list[tuple[str, str]]:
    """(dotted key, role) of each model-naming key besides ``evaluate`` whose models the run calls."""
    return list(_hook(name, "judge_roles", block, []))


def required_roles(name: str, block: dict) -> list[tuple[str, str]]:
    """(dotted key, why) of each model-naming key the run needs filled in."""
    return list(_hook(name, "required_roles", block, []))


def settings_problems(name: str, block: dict) -> list[str]:
    """What the schema cannot say about the study block, each naming its key in full
    (``studies.<study>.<key>: ...``)."""
    return list(_hook(name, "settings_problems", block, []))


def prompt_files(name: str, block: dict) -> list[str]:
    """The prompt templates a run of the study reads: its ``prompt_templates(block)`` where it
    declares one (a study whose settings choose among templates), else its whole folder."""
    return list(_hook(name, "prompt_templates", block, [prompts_dir(name)]))


def final_targets(name: str, block: dict, models: list[str]) -> list[str]:
    """The study's final targets: its ``outputs`` but those ``unused_outputs`` names, each
    wildcard filled: ``{model}`` with every evaluated model, others by ``target_wildcards``."""
    declared = study(name)
    wildcards = declared.target_wildcards
    values = {"model": list(models), **(wildcards(block, models) if wildcards else {})}
    unused = set(_hook(name, "unused_outputs", block, ()))
    targets = []
    for key, output in declared.outputs.items():
        if key in unused:
            continue
        keys = re.findall(r"{(\w+)}", output.path)
        for combo in itertools.product(*(values[k] for k in keys)):
            targets.append(output.path.format(**dict(zip(keys, combo, strict=True))))
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
    A study declares its own as its ``Study.answers``.

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


@dataclass(frozen=True)
class ExposureSource:
    """What a study declares to be audited for exposure (``Study.exposure``)."""

    items: str  # the study's prepared items (JSONL), one item per line
    id_key: str
    text_key: str
    dataset: str  # as the prompt names it
    kind: str  # what one item is, as the prompt names it
    # When the published dataset became public (YYYY-MM, with its source); None: not documented.
    released: str | None = None


@dataclass(frozen=True)
class Output:
    """One file a study publishes, as the report shows it (the module's docstring says each
    field): its path, what it shows, its resampling unit where it is not the study's, and a
    figure's table."""

    path: str
    caption: str = ""
    unit: str = ""
    table: str = ""


def outputs(
    paths: Mapping[str, str], about: Mapping[str, Mapping] | None = None
) -> dict[str, Output]:
    """Every output of ``paths`` (name -> path, as the rules declare them) as an ``Output``,
    with what ``about`` says of it (name -> the Output's other fields, e.g.
    ``{"caption": ..., "unit": ...}``). A name ``about`` gives that ``paths`` lacks, or a
    field ``Output`` lacks, is an error when the study's module is imported."""
    about = dict(about or {})
    unknown = sorted(set(about) - set(paths))
    if unknown:
        raise ValueError(f"outputs: {unknown} name no output (known: {sorted(paths)})")
    return {name: Output(path, **about.get(name, {})) for name, path in paths.items()}


Hook = Callable | None


@dataclass(frozen=True)
class Study:
    """Everything the package outside a study knows of it (the module's docstring says each
    field). A study's ``workflow.py`` ends with ``STUDY = Study(...)``; :func:`study` loads it."""

    name: str
    title: str
    paths: ResultPaths
    outputs: Mapping[str, Output]
    resampling: Resampling
    headlines: tuple[Headline, ...]
    summary_note: str = ""
    answers: Answers | None = None
    item_folders: tuple[str, ...] = ()
    report_entries: Mapping[str, str] = field(default_factory=dict)
    text_columns: tuple[str, ...] = ()
    label_columns: tuple[str, ...] = ()
    exposure: ExposureSource | None = None
    # hooks (functions; None where the study has none)
    data_keys: Hook = None
    judge_roles: Hook = None
    required_roles: Hook = None
    settings_problems: Hook = None
    prompt_templates: Hook = None
    new_tokens: Hook = None
    target_wildcards: Hook = None
    unused_outputs: Hook = None
    unit_scores: Hook = None
    comparison_inputs: Hook = None
    comparison_params: Hook = None
    corrected_comparison: Hook = None

    def __post_init__(self):
        where = f"oncoeval/studies/{self.name}/workflow.py: STUDY"
        if self.paths.study != self.name:
            raise ValueError(f"{where}: paths are those of {self.paths.study}")
        if not all(isinstance(o, Output) for o in self.outputs.values()):
            raise TypeError(f"{where}: outputs must be Output values (contract.outputs)")
        if not self.headlines or any(h.study != self.name for h in self.headlines):
            raise ValueError(f"{where}: headlines must be this study's, at least one")
        hooks = ("unit_scores", "comparison_inputs")
        missing = [h for h in hooks if getattr(self, h) is None]
        if missing:
            raise ValueError(f"{where}: the model comparison needs {missing}")

    def output_of(self, path: str) -> Output | None:
        """The declared output a ``results/{study}/...`` file is (a wildcard matches one path
        part); an output without wildcards before one with them."""
        for output in sorted(self.outputs.values(), key=lambda o: o.path.count("{")):
            if _path_pattern(output.path).fullmatch(path):
                return output
        return None


@functools.cache
def _path_pattern(path: str) -> re.Pattern:
    parts = re.split(r"{\w+}", path)
    return re.compile("[^/]+".join(re.escape(part) for part in parts))
