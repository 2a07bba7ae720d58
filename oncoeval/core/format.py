"""How every surface writes a value: the study tables' Markdown twins, the report's pages, the
summary (page, Markdown, terminal) and the exported logs all format through this module.

Numbers: a mean or score to :data:`DIGITS` decimals with its interval as ``value [low, high]``
(:func:`format_ci`); a count as a whole number, also when its column reads back as floats
(:func:`is_count_column`); a share of answers as a whole percentage with its count,
``95% (38/40)`` (:func:`format_share`); money in US dollars to four decimals, ``$0.0125``
(:func:`format_usd`); seconds to one decimal (:func:`format_seconds`). A missing value reads
:data:`MISSING` (or the reason a study wrote in its place), never ``nan`` or ``None``; a
boolean reads yes/no; a column header reads in words (:func:`column_label`).

It sits below the studies and the report (oncoeval.core.io writes the tables' Markdown with it) and
imports nothing of the package.
"""

from __future__ import annotations

import math

import pandas as pd

MISSING = "–"
CI_SUFFIXES = ("_ci_low", "_ci_high")
# Decimals of a mean, a score or a rate, and of its interval's bounds.
DIGITS = 3
# Columns that hold counts besides ``n`` and ``n_*`` (confusion cells, ranks).
COUNT_COLUMNS = frozenset({"tp", "fp", "fn", "tn", "rank", "m", "requests", "failed", "cached"})
# Text a missing value turns into when a column of it was cast to strings.
MISSING_TEXT = frozenset({"nan", "NaN", "None", "<NA>", "NaT", "null"})
# Words of a header kept as written in the papers and the statistics (``em_f1`` -> "EM-F1"
# is not attempted: each part is mapped on its own, ``em F1``... reads "EM F1").
WORDS = {
    "f1": "F1", "pcs": "PCS", "pcr": "PCR", "em": "EM", "ci": "CI", "mdd": "MDD",
    "auc": "AUC", "roc": "ROC", "usd": "US$", "id": "id", "ids": "ids", "bleu4": "BLEU-4",
    "rouge1": "ROUGE-1", "rougel": "ROUGE-L", "bertscore": "BERTScore", "kl": "KL",
    "s": "(s)", "llm": "LLM", "tp": "TP", "fp": "FP", "fn": "FN", "tn": "TN", "ppv": "PPV",
    "npv": "NPV", "icc": "ICC", "qwk": "QWK",
}  # fmt: skip
# Whole headers that read better in other words than their parts.
LABELS = {
    "n_unscored": "unscored",
    "p_adjusted": "adjusted p",
    "p_value": "p",
    "requestset": "request set",
    "wall_s": "wall time (s)",
    "cost_usd": "cost",
    "spent_usd": "spent in this run",
    "cached_usd": "cost of answers read from the cache",
}


def is_missing(value) -> bool:
    """None, NaN, pandas' NA, or the text those turn into once a column was cast to strings."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, str):
        return value.strip() in MISSING_TEXT
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def is_count_column(name: str) -> bool:
    """Whether a column counts things (written as whole numbers, never ``6.000``)."""
    return name == "n" or name.startswith("n_") or name in COUNT_COLUMNS


def yes_no(value) -> str:
    return "yes" if value else "no"


def format_count(value) -> str:
    """A count as a whole number; a missing one as "–"."""
    if is_missing(value):
        return MISSING
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{int(value)}" if float(value).is_integer() else format_number(float(value))
    return str(value)


def n_text(n, clusters=float("nan"), unit: str = "") -> str:
    """ "22 rollouts in 11 patients": a headline's n in its unit (and clusters, when they are
    fewer than the units); the bare count where no unit is known."""
    count = format_count(n)
    if not unit or count == MISSING:
        return count
    one, _, group = unit.partition("/")
    text = f"{count} {_plural(one, n)}"
    if group and not is_missing(clusters) and int(clusters) != int(n):
        text += f" in {format_count(clusters)} {_plural(group, clusters)}"
    return text


def _plural(word: str, count) -> str:
    return word if int(count) == 1 else f"{word}s"


def format_share(share, n) -> str:
    """``95% (38/40)``: a share of ``n`` answers with its count; "–" when not known."""
    if is_missing(share) or is_missing(n):
        return MISSING
    return f"{share:.0%} ({round(share * n)}/{int(n)})"


def format_usd(value) -> str:
    """``$0.0125``; no price known reads "not priced" (never $0)."""
    if is_missing(value):
        return "not priced"
    return f"${value:.4f}"


def format_seconds(value) -> str:
    return MISSING if is_missing(value) else f"{value:.1f}"


def format_number(value, digits: int = DIGITS) -> str:
    """Numbers as a reader wants them: integers plain, floats to ``digits`` decimals, a
    missing value as "–", a boolean as yes/no."""
    if is_missing(value):
        return MISSING
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()  # a numpy scalar
    if isinstance(value, bool):
        return yes_no(value)
    if isinstance(value, int) or (
        isinstance(value, float) and value.is_integer() and abs(value) >= 1000
    ):
        return f"{int(value)}"
    if isinstance(value, float):
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        return f"{value:.{digits}f}"
    return str(value)


def format_ci(value, low, high, digits: int = DIGITS) -> str:
    """``0.41 [0.33, 0.49]``; a missing interval shows the value alone."""
    # A value with an interval is a mean, even when a TSV column of 1s reads back as integers.
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    text = format_number(float(value) if numeric else value, digits)
    if is_missing(low) or is_missing(high):
        return text
    return f"{text} [{format_number(float(low), digits)}, {format_number(float(high), digits)}]"


def format_cell(value, column: str = "", digits: int = DIGITS) -> str:
    """One cell of any table as a reader sees it (a count whole, a boolean yes/no, text as it
    is, a missing value "–")."""
    if isinstance(value, str):
        return MISSING if value.strip() in MISSING_TEXT else value
    if is_count_column(column):
        return format_count(value)
    return format_number(value, digits)


def column_label(name) -> str:
    """A column header in words: ``n_unscored`` -> "unscored", ``em_precision`` -> "EM
    precision"; ``rollout_scores: f1`` (a joined table's column) -> "rollout scores: F1";
    headers that are already words stay as they are."""
    name = str(name)
    if ": " in name:
        prefix, rest = name.split(": ", 1)
        return f"{column_label(prefix)}: {column_label(rest)}"
    if name in LABELS:
        return LABELS[name]
    if "_" not in name:
        return WORDS.get(name, name)
    parts = [p for p in name.split("_") if p]
    return " ".join(WORDS.get(p, p) for p in parts)


def ci_pairs(columns: list[str]) -> dict[str, tuple[str, str]]:
    """Value column -> (low column, high column) for every interval the table carries."""
    pairs: dict[str, tuple[str, str]] = {}
    for i, col in enumerate(columns):
        if col.endswith("_ci_low"):
            base = col[: -len("_ci_low")]
            high = f"{base}_ci_high"
            if base in columns and high in columns:
                pairs[base] = (col, high)
        elif col == "ci_low" and "ci_high" in columns:
            previous = [c for c in columns[:i] if not c.endswith(CI_SUFFIXES)]
            if previous:
                pairs[previous[-1]] = ("ci_low", "ci_high")
    return pairs


def ci_label(column: str) -> str:
    return f"{column_label(column)} [95% CI]"


def display_frame(df: pd.DataFrame, digits: int = DIGITS, labels: bool = True) -> pd.DataFrame:
    """A display copy of ``df``: each interval folded into its value column (``X [95% CI]``),
    every cell formatted (:func:`format_cell`), headers in words (``labels``)."""
    pairs = ci_pairs([str(c) for c in df.columns])
    shown = pd.DataFrame(index=df.index)
    folded = {c for pair in pairs.values() for c in pair}
    for col in df.columns:
        if col in folded:
            continue
        header = column_label(col) if labels else str(col)
        if col in pairs:
            low, high = pairs[col]
            shown[f"{header} [95% CI]"] = [
                format_ci(v, lo, hi, digits)
                for v, lo, hi in zip(df[col], df[low], df[high], strict=True)
            ]
        elif is_boolean(df[col]):
            shown[header] = [
                MISSING if is_missing(v) else yes_no(str(v) == "True") for v in df[col]
            ]
        else:
            shown[header] = [format_cell(v, str(col), digits) for v in df[col]]
    return shown


def is_boolean(column: pd.Series) -> bool:
    """A column of booleans, also one read back as the text True/False (a model's answer
    "True" in a column of other answers stays text)."""
    known = [v for v in column if not is_missing(v)]
    return bool(known) and all(str(v) in ("True", "False") for v in known)


def markdown(df: pd.DataFrame, digits: int = DIGITS) -> str:
    """``df`` as a Markdown table the way every page shows it (:func:`display_frame`)."""
    if not len(df):
        return "(no rows)"
    return display_frame(df, digits).to_markdown(index=False, disable_numparse=True)


def finite(value):
    """``value`` as a float when it is a finite number, else None (JSON and inspect logs
    carry no NaN)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None
