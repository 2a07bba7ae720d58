"""Matcher validation: which matcher, rule and threshold to trust, measured on labelled pairs.

The validation file (``resources/side_effects/matcher_validation.tsv``) is a TSV with ``#``
comments and columns ``prediction``, ``reference``, ``same`` (yes/no) and ``kind``:

- ``term``: a reference term against itself (``same`` = yes); these rows define the reference
  vocabulary (the 31 terms of the published clinician reference);
- ``lay``: a rewording of one reference term (yes; at most one term per wording);
- ``negative``: a wording that does not name that term (no): a rewording of a neighbouring term,
  or a side effect the reference does not list.

Each wording is matched, as a one-item list, against the whole vocabulary at once, as a model's
item is matched against a site's reference list. A pair the matcher makes is a true positive when
it is labelled ``yes`` and a false positive otherwise (whether or not a ``negative`` row names it);
a ``yes`` pair it does not make is a false negative. Pair precision, recall and F1 are taken over
the ``lay`` and ``negative`` wordings. Two checks sit beside them: ``identical_matched``, the terms
matched to themselves, and ``distinct_term_pairs``, the pairs of distinct reference terms a matcher
pairs when each term is matched against the other terms alone. ``agreement`` is the share of
labelled rows the matcher's decision agrees with (the paper's figure: 96% of 30 examples).

The default matcher is the candidate with the highest pair F1 among those with
``distinct_term_pairs`` = 0 (:func:`select`).

The configured matcher (and the llm judge when one is configured) is also validated as a judge
(:func:`judge_labels`, :func:`write_judge_validation`): on every labelled row the human label is
``same`` and the judge's verdict is whether the matcher made that pair; confusion matrix,
sensitivity and specificity per class and Cohen's κ with their intervals. Rows a review plan
drew (``make review STUDY=side_effects``; an ``inclusion_probability`` column) weigh 1 / their
inclusion probability in those tables and in the candidate table's ``agreement``, other rows 1
(oncoeval.judges.agreement); the candidate table's pair counts, precision, recall and F1 count
every row alike.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...core.errors import InputError
from ...core.inputs import read_table, read_template
from ...core.io import write_table
from ...core.records import read_responses, write_requests
from ...judges.agreement import weighted_estimates, weighting, write_judges_tables
from ...judges.correction import Validation
from ...stats.bootstrap import BootstrapSettings
from ...stats.compare import interval_note, mean_ci
from .aliases import AliasTable, norm_key
from .matchers import (
    EmbeddingMatcher,
    LexicalMatcher,
    LLMMatcher,
    MatchTask,
    resolve_embedding_model,
)

_YES = {"yes", "y", "true", "1"}
_NO = {"no", "n", "false", "0"}
KINDS = ("term", "lay", "negative")
THRESHOLDS = tuple(round(t, 2) for t in np.arange(0.40, 0.951, 0.05))
COLUMNS = [
    "matcher",
    "method",
    "rule",
    "threshold",
    "n_wordings",
    "n_positive",
    "tp",
    "fp",
    "fn",
    "precision",
    "recall",
    "f1",
    "identical_matched",
    "n_terms",
    "distinct_term_pairs",
    "agreement",
    "agreement_ci_low",
    "agreement_ci_high",
    "n_unscored",
    "selected",
]
RULES = {
    "assignment": "identical first; distinct reference terms never paired; highest total similarity",
    "earlier": "most pairs, then highest similarity; no guard (this project's rule before)",
}


def read_validation(path) -> pd.DataFrame:
    """The labelled rows, checked: InputError names the file, the row and what is wrong."""
    df = read_table(path, "\t", "validation table", comment="#", dtype=str, keep_default_na=False)
    missing = {"prediction", "reference", "same", "kind"} - set(df.columns)
    if missing:
        raise InputError(path, "header", f"missing columns {sorted(missing)}")
    labels = []
    for i, row in df.iterrows():
        where = f"row {i + 2} of the table"
        value, kind = row["same"].strip().lower(), row["kind"].strip().lower()
        if value not in _YES | _NO:
            raise InputError(path, where, f"same must be yes or no, not {row['same']!r}")
        if not row["prediction"].strip() or not row["reference"].strip():
            raise InputError(path, where, "prediction and reference must be filled")
        if kind not in KINDS:
            raise InputError(path, where, f"kind must be one of {KINDS}, not {row['kind']!r}")
        if (kind == "negative") == (value in _YES):
            raise InputError(path, where, f"a {kind} row must have same = {_expected(kind)}")
        if kind == "term" and norm_key(row["prediction"]) != norm_key(row["reference"]):
            raise InputError(path, where, "a term row pairs a reference term with itself")
        labels.append(value in _YES)
    if "inclusion_probability" in df.columns:
        df["inclusion_probability"] = [
            _probability(path, i, p) for i, p in enumerate(df["inclusion_probability"])
        ]
    df["same"] = labels
    df["kind"] = df["kind"].str.strip().str.lower()
    df["prediction"] = df["prediction"].str.strip().str.lower()
    df["reference"] = df["reference"].str.strip().str.lower()
    terms = set(df.loc[df["kind"] == "term", "reference"])
    if not terms:
        raise InputError(path, None, "no term rows: the reference vocabulary is empty")
    for i, row in df.iterrows():
        if row["reference"] not in terms:
            raise InputError(
                path, f"row {i + 2} of the table", f"{row['reference']!r} is not a term row"
            )
    dupes = df[df.duplicated(["prediction", "reference"], keep=False)]
    if len(dupes):
        first = dupes.iloc[0]
        raise InputError(
            path,
            None,
            f"the pair {first['prediction']!r} / {first['reference']!r} is labelled twice",
        )
    positives = df[df["same"]].groupby("prediction")["reference"].nunique()
    if (positives > 1).any():
        raise InputError(
            path, None, f"{positives[positives > 1].index[0]!r} is labelled yes for two terms"
        )
    return df.reset_index(drop=True)


def _probability(path, i: int, value: str) -> float:
    """A row's inclusion probability (NaN when blank: a row no review plan drew)."""
    if not value.strip():
        return math.nan
    try:
        p = float(value)
    except ValueError:
        p = math.nan
    if not 0 < p <= 1:
        raise InputError(
            path,
            f"row {i + 2} of the table",
            f"inclusion_probability must be in (0, 1], not {value!r}",
        )
    return p


def design_weights(df: pd.DataFrame):
    """Each row's design weight, 1 / inclusion probability (NaN where it has none), or None
    when no row has one (a hand-filled file: every label weighs alike)."""
    if "inclusion_probability" not in df.columns or df["inclusion_probability"].isna().all():
        return None
    return (1 / df["inclusion_probability"].astype(float)).to_numpy()


def _expected(kind: str) -> str:
    return "no" if kind == "negative" else "yes"


def vocabulary(df: pd.DataFrame) -> list[str]:
    return sorted(set(df.loc[df["kind"] == "term", "reference"]))


def tasks(df: pd.DataFrame) -> list[MatchTask]:
    """One task per wording against the whole vocabulary, then one per term against the others."""
    vocab = vocabulary(df)
    wordings = list(dict.fromkeys(df["prediction"]))
    out = [MatchTask(f"val|{k}", [w], vocab) for k, w in enumerate(wordings)]
    out += [
        MatchTask(f"val-distinct|{k}", [t], [u for u in vocab if u != t])
        for k, t in enumerate(vocab)
    ]
    return out


def evaluate(df: pd.DataFrame, val_tasks: list[MatchTask], results: dict, settings) -> dict:
    """Pair counts, P/R/F1, the two vocabulary checks and the row agreement of one matcher."""
    made: set[tuple[str, str]] = set()
    unscored_wordings: set[str] = set()
    distinct: set[frozenset] = set()
    n_unscored = 0
    for task in val_tasks:
        res = results[task.key]
        if res.status != "ok":
            n_unscored += 1
            if task.key.startswith("val|"):
                unscored_wordings.add(task.left[0])
            continue
        pairs = {(task.left[i], task.right[j]) for i, j in res.pairs}
        if task.key.startswith("val|"):
            made |= pairs
        else:
            distinct |= {frozenset(p) for p in pairs}
    terms = vocabulary(df)
    scored = df[~df["prediction"].isin(unscored_wordings)]
    wordings = scored[scored["kind"] != "term"]
    positive = set(map(tuple, wordings.loc[wordings["same"], ["prediction", "reference"]].values))
    made_wording = {p for p in made if p[0] in set(wordings["prediction"])}
    tp = len(made_wording & positive)
    fp, fn = len(made_wording - positive), len(positive - made_wording)
    precision = tp / (tp + fp) if tp + fp else math.nan
    recall = tp / (tp + fn) if tp + fn else math.nan
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else math.nan
    decided = [(row.prediction, row.reference) in made for row in scored.itertuples()]
    weights = design_weights(scored)
    if not decided:
        agreement = (math.nan,) * 3
    elif weights is None:
        hits = [float(d == same) for d, same in zip(decided, scored["same"], strict=True)]
        agreement = mean_ci(hits, settings, kind="binary")
    else:  # reviewed rows weigh 1 / inclusion probability, as in the judge tables
        estimates = weighted_estimates(scored["same"], decided, (True, False), weights, settings)
        agreement = estimates["exact_agreement"]
    return {
        "n_wordings": int(wordings["prediction"].nunique()),
        "n_positive": len(positive),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "identical_matched": sum((t, t) in made for t in terms),
        "n_terms": len(terms),
        "distinct_term_pairs": len(distinct),
        "agreement": agreement[0],
        "agreement_ci_low": agreement[1],
        "agreement_ci_high": agreement[2],
        "n_unscored": n_unscored,
    }


JUDGE_CLASSES = ("yes", "no")


def judge_labels(df: pd.DataFrame, val_tasks: list[MatchTask], results: dict):
    """(human labels, matcher verdicts) per labelled row, as ``yes`` / ``no``.

    The verdict is ``yes`` when the matcher paired the row's wording with the row's term; a
    wording whose match task was not scored (an unreadable judge answer) gives ``None``.
    """
    made: dict[str, set[str]] = {}
    for task in val_tasks:
        if not task.key.startswith("val|"):
            continue
        res = results[task.key]
        wording = task.left[0]
        made[wording] = {task.right[j] for _, j in res.pairs} if res.status == "ok" else None
    truth = ["yes" if same else "no" for same in df["same"]]
    judged = []
    for row in df.itertuples():
        paired = made[row.prediction]
        judged.append(None if paired is None else ("yes" if row.reference in paired else "no"))
    return truth, judged


def select(table: pd.DataFrame) -> pd.Series:
    """True on the candidate with the highest pair F1 among those pairing no distinct terms."""
    allowed = table[(table["distinct_term_pairs"] == 0) & table["f1"].notna()]
    chosen = pd.Series(False, index=table.index)
    if len(allowed):
        chosen[allowed["f1"].idxmax()] = True  # ties: the first listed (lexical, then low t)
    return chosen


def candidate_table(
    df: pd.DataFrame,
    synonyms_path,
    embedding_model,
    thresholds=THRESHOLDS,
    judged_path=None,
    settings: BootstrapSettings | None = None,
) -> pd.DataFrame:
    """Every candidate matcher on the validation set, with the selected one marked.

    ``embedding_model``: ``embedded:NAME``, a folder, a loaded :class:`EmbeddingMatcher` (its
    threshold and rule are set per candidate) or None for no embedding candidates.
    """
    settings = settings or BootstrapSettings()
    val_tasks = tasks(df)
    vocab = vocabulary(df)
    rows = []
    lexical = LexicalMatcher(AliasTable.read(synonyms_path)).run(val_tasks, vocab)
    rows.append(
        {
            "matcher": "lexical",
            "method": LexicalMatcher.name,
            "rule": "assignment",
            "threshold": None,
        }
    )
    rows[-1].update(evaluate(df, val_tasks, lexical, settings))
    if embedding_model is not None:
        model = embedding_model
        if not isinstance(model, EmbeddingMatcher):
            model = EmbeddingMatcher(resolve_embedding_model(embedding_model), 1.0)
        for rule in ("assignment", "earlier"):
            for threshold in thresholds:
                model.threshold = float(threshold)
                model.guard = rule == "assignment"
                model.most_pairs_first = rule == "earlier"
                name = f"embedding@{threshold:.2f}" + ("" if rule == "assignment" else " earlier")
                row = {"matcher": name, "method": EmbeddingMatcher.name, "rule": rule}
                row["threshold"] = float(threshold)
                row.update(evaluate(df, val_tasks, model.run(val_tasks, vocab), settings))
                rows.append(row)
    if judged_path is not None:
        results = LLMMatcher("").read(val_tasks, read_responses(judged_path), vocab)
        rows.append(
            {"matcher": "llm", "method": LLMMatcher.name, "rule": "assignment", "threshold": None}
        )
        rows[-1].update(evaluate(df, val_tasks, results, settings))
    table = pd.DataFrame(rows)
    table["selected"] = select(table)
    return table[COLUMNS]


def write_validation_requests(validation_path, template_path, max_new_tokens, out_path) -> None:
    judge = LLMMatcher(read_template(template_path), max_new_tokens)
    write_requests(out_path, judge.requests(tasks(read_validation(validation_path))))


def _configured_judges(df, matcher, synonyms_path, embedding_model, judged_path):
    """{judge id: matcher results on the validation tasks} for the configured matchers."""
    val_tasks, vocab = tasks(df), vocabulary(df)
    judges = {}
    if matcher.get("method") == "lexical":
        judges["lexical"] = LexicalMatcher(AliasTable.read(synonyms_path)).run(val_tasks, vocab)
    if embedding_model is not None:
        embedding_model.threshold = float(matcher["threshold"])
        embedding_model.guard, embedding_model.most_pairs_first = True, False
        name = f"embedding@{float(matcher['threshold']):.2f}"
        judges[name] = embedding_model.run(val_tasks, vocab)
    if judged_path is not None:
        judges["llm"] = LLMMatcher("").read(val_tasks, read_responses(judged_path), vocab)
    weights = design_weights(df)
    return {
        name: Validation(*judge_labels(df, val_tasks, results), weights)
        for name, results in judges.items()
    }


def write_judge_validation(df, judges: dict, settings: BootstrapSettings, out: dict) -> None:
    """Confusion, per-class and κ tables of each configured matcher as a judge of ``same``."""
    write_judges_tables(judges, JUDGE_CLASSES, settings, out, "Side-effect matcher as a judge")


def _weights_note(df: pd.DataFrame, settings: BootstrapSettings) -> str:
    weights = design_weights(df)
    if weights is None:
        return ""
    return (
        f" Weights: {weighting(weights)}: agreement weighs each row by 1 / its inclusion "
        "probability (a percentile bootstrap redraws rows within groups of equal weight, "
        f"{settings.n_resamples} resamples, seed {settings.seed}); the pair counts, precision, "
        "recall and F1 count every row alike."
    )


def write_agreement(
    inputs: dict,
    methods,
    matcher,
    out_tsv,
    out_md,
    settings: BootstrapSettings,
    judge_out: dict | None = None,
) -> pd.DataFrame:
    """The candidate table of the configured matchers (embedding: the sweep and ``threshold``).

    ``inputs``: the rule's named inputs ``validation`` (the labelled pairs), ``synonyms`` and,
    when the LLM matcher is validated, ``judged`` (its verdicts).
    ``judge_out`` (``summary``, ``confusion``, ``per_class`` to (tsv, md) paths): where the
    judge-validation tables of the configured matchers go (:func:`write_judge_validation`).
    """
    validation_path, synonyms_path = inputs["validation"], inputs["synonyms"]
    judged_path = inputs.get("judged")
    df = read_validation(validation_path)
    thresholds = sorted({*THRESHOLDS, round(float(matcher["threshold"]), 2)})
    embedding = None
    if "embedding" in methods and matcher.get("model") is not None:
        embedding = EmbeddingMatcher(resolve_embedding_model(matcher["model"]), 1.0)
    table = candidate_table(
        df,
        synonyms_path,
        embedding,
        thresholds,
        judged_path if "llm" in methods else None,
        settings,
    )
    notes = [
        f"{len(tasks(df))} match tasks from {validation_path}: each of "
        f"{df['prediction'].nunique()} wordings against all {len(vocabulary(df))} reference "
        "terms, and each term against the other terms (distinct_term_pairs).",
        "Pair precision, recall and F1 over the lay and negative wordings; agreement: share of "
        "labelled rows decided as labelled (the paper: 96% of 30 examples for its LLM matcher). "
        + interval_note("labelled row", "labelled row", "the labelled rows decided", settings)
        + _weights_note(df, settings),
        "rule assignment: " + RULES["assignment"] + "; earlier: " + RULES["earlier"] + ".",
        "selected: highest F1 among the candidates with distinct_term_pairs = 0; the configured "
        f"matcher is {matcher.get('method')} (threshold {matcher.get('threshold')}).",
    ]
    write_table(table, out_tsv, out_md, title="Matcher validation", notes=notes)
    if judge_out is not None:
        judges = _configured_judges(
            df,
            matcher,
            synonyms_path,
            embedding,
            judged_path if "llm" in methods else None,
        )
        write_judge_validation(df, judges, settings, judge_out)
    return table
