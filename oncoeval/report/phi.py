"""Which report cells may show free text when a study's inputs are marked ``contains_phi``.

Every table the report shows (the study tables, the per-model pages and the per-item drill-down)
passes through :func:`leave_out_text` before it is rendered. Free text that comes from the inputs
or from model answers (answers, judge reasons, quotes, parsed values, notes, questions, error
messages that may quote them) is replaced by :data:`LEFT_OUT` unless ``report.include_phi_text``
is set; numbers, ids and labels stay.

A column of numbers never holds free text; another column does when

- its name (less a drill-down's ``"folder: "`` prefix) is one of :data:`TEXT_COLUMNS`, or one a
  study declares in its ``Study.text_columns`` (unless the study declares
  it a label, ``Study.label_columns``, which wins);
- its name ends with one of :data:`TEXT_SUFFIXES`; or
- it is a column of strings, not declared a label (:data:`LABEL_COLUMNS`, or a study's
  ``Study.label_columns``), and one of its cells reads as prose: a line break, more than
  :data:`PROSE_WORDS` words or more than :data:`PROSE_CHARS` characters. This catches text
  under a name no one declared (a request's ``meta`` copied from an input record).
"""

from __future__ import annotations

import pandas as pd

from ..core.blocks import study_block
from ..studies import STUDIES, contract

LEFT_OUT = "(left out: the study's inputs are marked contains_phi)"

TEXT_COLUMNS = frozenset(
    {
        "text", "answer", "answers", "reason", "reasons", "rationale", "explanation", "quote",
        "quotes", "raw", "note", "notes", "question", "questions", "input", "model output",
        "prompt", "messages", "content", "response", "output", "completion", "parsed", "value",
        "values", "field_value", "primary", "prediction", "predictions", "items", "list",
        "error", "parse_error", "comment", "comments", "evidence", "span", "context",
        "example_question", "example_assumption", "assumption", "correction", "myth", "fact",
    }
)  # fmt: skip
TEXT_SUFFIXES = ("_text", "_answer", "_reason", "_quote", "_note", "_question", "_raw", "_error")
LABEL_COLUMNS = frozenset(
    {
        "model", "regime", "variant", "view", "gold_view", "measure", "metric", "request set",
        "request_id", "finish", "status", "category", "subtype", "section", "field", "site",
        "study", "requestset", "method", "parse_method", "proxy", "source", "kind",
    }
)  # fmt: skip
PROSE_WORDS = 12
PROSE_CHARS = 160


def _declared(study: str | None, name: str) -> frozenset:
    """The column names a study declares under ``name`` (``Study.text_columns`` or
    ``label_columns``); none for no study."""
    if study not in STUDIES:
        return frozenset()
    return frozenset(getattr(contract.study(study), name))


def _bare(column) -> str:
    return str(column).rsplit(": ", 1)[-1].strip().lower()


def _reads_as_prose(values: pd.Series) -> bool:
    for value in values.dropna():
        if not isinstance(value, str):
            continue
        if "\n" in value or len(value) > PROSE_CHARS or len(value.split()) > PROSE_WORDS:
            return True
    return False


def text_columns(df: pd.DataFrame, study: str | None = None) -> list:
    """The columns of ``df`` that hold free text from inputs or answers (see the module doc)."""
    named = TEXT_COLUMNS | _declared(study, "text_columns")
    own_labels = _declared(study, "label_columns")
    labels = LABEL_COLUMNS | own_labels
    found = []
    for col in df.columns:
        bare = _bare(col)
        if pd.api.types.is_numeric_dtype(df[col]) or pd.api.types.is_bool_dtype(df[col]):
            continue  # numbers stay, whatever their column is called
        if bare in own_labels:
            continue  # a study's own label under a common text name (e.g. an answer kind)
        if bare in named or bare.endswith(TEXT_SUFFIXES):
            found.append(col)
        elif bare not in labels and not bare.endswith("_id") and _reads_as_prose(df[col]):
            found.append(col)
    return found


def leave_out_text(df: pd.DataFrame, study: str | None = None) -> pd.DataFrame:
    """A copy of ``df`` whose free-text cells read :data:`LEFT_OUT` (empty cells stay empty, so
    a reader still sees which rows had an answer, a reason or an error)."""
    shown = df.copy()
    for col in text_columns(df, study):
        filled = shown[col].notna() & (shown[col].astype(str).str.strip() != "")
        shown[col] = shown[col].astype(object).where(~filled, LEFT_OUT)
    return shown


def shows_phi_text(config: dict, study: str) -> bool:
    """Whether the report's pages of ``study`` may show free text from its inputs and answers:
    not for a study marked contains_phi, unless report.include_phi_text (this module).
    """
    return bool(
        config["report"]["include_phi_text"] or not study_block(config, study)["contains_phi"]
    )
