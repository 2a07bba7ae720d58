"""Readers of user-supplied input files that stop with an InputError naming file, record and problem.

Loaders read text through :func:`read_text` (UTF-8, with or without a byte-order mark; any other
encoding is named with the line it fails on), JSON through :func:`read_json`, delimited tables
through :func:`read_table`, and prompt templates through :func:`read_template`, whose result
remembers its file so that :func:`check_placeholders` can name it when a placeholder is missing.
All of them run in the studies' prepare and request steps, before any model is called.
"""

from __future__ import annotations

import io
import json
import os
import re
import unicodedata
from pathlib import Path

import pandas as pd

from .errors import InputError


def decode_utf8(data: bytes, path) -> str:
    """``data`` as UTF-8 text (a leading byte-order mark dropped); else InputError with the line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            path,
            f"line {line}",
            f"not UTF-8 text (byte 0x{data[exc.start]:02x}); save the file as UTF-8 "
            "(it looks like latin-1 or Windows-1252)",
        ) from None


def read_text(path: str | os.PathLike, what: str = "file") -> str:
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, f"{what} not found")
    return decode_utf8(path.read_bytes(), path)


# ---------------------------------------------------------------- strict JSON
# Input JSON is read strictly: a key given twice in one object (json keeps the last silently),
# NaN/Infinity (not JSON), integers longer than MAX_INT_DIGITS (Python's int() refuses 4,300),
# nesting deeper than the decoder can follow, and lone surrogate escapes ("\ud800": valid JSON
# but no text, every later write of it fails) each stop with the file and line named.
MAX_INT_DIGITS = 100
_LONE_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class _Refused(ValueError):
    """A value strict JSON refuses (raised inside the decoder's hooks)."""


def _pairs(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise _Refused(f"key {key!r} given twice in one object (JSON keeps only the last)")
        obj[key] = value
    return obj


def _constant(name):
    raise _Refused(f"{name} is not a number JSON allows; give a number or null")


def _int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused(f"an integer of {len(digits)} digits (at most {MAX_INT_DIGITS})")
    return int(digits)


def _float(digits: str) -> float:
    value = float(digits)
    if value in (float("inf"), float("-inf")):
        raise _Refused(f"{digits[:20]}... overflows a number (it reads as infinity)")
    return value


STRICT_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_constant=_constant, parse_int=_int, parse_float=_float
)


def _lone_surrogate(value) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def decode_json(text: str, path, where=None, start: int = 0):
    """One JSON value from ``text`` at ``start`` (value, end), read strictly (see above).

    Problems raise InputError naming ``path`` and ``where`` (else the line of the problem)."""
    try:
        value, end = STRICT_DECODER.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise InputError(
            path, where or f"line {exc.lineno}", f"not valid JSON ({exc.msg})"
        ) from None
    except RecursionError:
        line = text.count("\n", 0, start) + 1
        raise InputError(
            path, where or f"line {line}", "JSON nested too deeply to read (a broken export?)"
        ) from None
    except ValueError as exc:  # _Refused, and any other value the decoder cannot make
        line = text.count("\n", 0, start) + 1
        raise InputError(path, where or f"line {line}", f"refused JSON: {exc}") from None
    if _LONE_SURROGATE.search(text, start, end) and _lone_surrogate(value):
        line = text.count("\n", 0, start) + 1
        raise InputError(
            path,
            where or f"line {line}",
            "a lone surrogate escape (\\ud800-\\udfff without its pair) is no text; fix the "
            "export that wrote it",
        )
    return value, end


def loads_json(text: str, path, where=None):
    """A whole JSON document read strictly; text after the value is an error."""
    value, end = decode_json(text, path, where, len(text) - len(text.lstrip()))
    if text[end:].strip():
        line = text.count("\n", 0, end) + 1
        raise InputError(
            path, where or f"line {line}", "not valid JSON (extra data after the value)"
        )
    return value


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def decode_records(text: str, path) -> list:
    """The records of a JSON list, or of a stream of JSON values (JSONL, concatenated objects),
    each read strictly and named in any problem as ``record N (line L)``."""
    values: list = []
    pos = _skip_space(text, 0)

    def where() -> str:
        return f"record {len(values) + 1} (line {text.count(chr(10), 0, pos) + 1})"

    if not text.startswith("[", pos):  # a stream of values
        while pos < len(text):
            value, pos = decode_json(text, path, where(), pos)
            values.append(value)
            pos = _skip_space(text, pos)
        return values
    pos = _skip_space(text, pos + 1)
    while not text.startswith("]", pos):
        value, pos = decode_json(text, path, where(), pos)
        values.append(value)
        pos = _skip_space(text, pos)
        if text.startswith(",", pos):
            pos = _skip_space(text, pos + 1)
        elif not text.startswith("]", pos):
            raise InputError(path, where(), "not valid JSON (expected ',' or ']' after a record)")
    pos = _skip_space(text, pos + 1)
    if pos < len(text):
        raise InputError(path, where(), "not valid JSON (more after the list's closing ']')")
    return values


def read_json(path: str | os.PathLike, what: str = "file"):
    text = read_text(path, what)
    if not text.strip():
        raise InputError(path, "line 1", f"empty {what}: expected JSON")
    return loads_json(text, path)


# ---------------------------------------------------------------- field rules
# The longest value accepted per kind of field (characters); docs/inputs.md lists them. A longer
# value stops the prepare step naming its record: no prompt needs more, and a runaway cell (a
# whole file pasted into one) would otherwise make matching slow or be sent to a paid API.
FIELD_LIMITS = {
    "id": 200,  # question, note, profile, request and document ids
    "cell": 20_000,  # a cell of an input table (a profile, a reference term, an alias)
    "text": 20_000,  # a text field of a JSON record (a question, an answer, a myth, a reason)
    "document": 1_000_000,  # a clinical note (CORAL .txt, a guideline note), a request message
}
_INVISIBLE = re.compile(
    r"[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f"
    r"\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)


def check_length(path, where, value, kind: str, name: str = "") -> None:
    """Stop when ``value`` is longer than the limit of its kind of field."""
    limit = FIELD_LIMITS[kind]
    if isinstance(value, str) and len(value) > limit:
        field = f"{name} " if name else ""
        raise InputError(
            path,
            where,
            f"{field}holds {len(value):,} characters, more than the {limit:,} allowed for a "
            f"{kind} field (docs/inputs.md); is a whole file pasted into it?",
        )


def compare_key(value) -> str:
    """The form ids and terms are compared in: Unicode NFKC, zero-width and other invisible
    format characters removed, outer whitespace stripped (so NFC/NFD spellings and a stray
    zero-width space do not make two terms of one)."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", str(value))).strip()


def is_blank(value) -> bool:
    """Whether a text is empty once invisible characters and whitespace are removed."""
    return not isinstance(value, str) or not compare_key(value)


def normalise_newlines(text: str) -> str:
    """CRLF and lone CR line ends as LF (a spreadsheet's CRLF cells would put \\r in prompts)."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def check_cells(df: pd.DataFrame, path, what: str, header: bool = True) -> pd.DataFrame:
    """A table's shared rules: column names given once, cells within the cell limit, line ends
    normalised. Rows are numbered as a spreadsheet shows them (the header is row 1)."""
    if header:
        names = [str(c) for c in df.columns]
        seen = set()
        for name in names:
            if name in seen:
                raise InputError(
                    path, "header", f"column {name!r} given twice in the {what}; rename one"
                )
            seen.add(name)
    limit = FIELD_LIMITS["cell"]
    for col in df.columns:
        if pd.api.types.is_numeric_dtype(df[col]) or pd.api.types.is_bool_dtype(df[col]):
            continue
        lengths = df[col].map(lambda v: len(v) if isinstance(v, str) else 0)
        if len(lengths) and lengths.max() > limit:
            at = int(lengths.to_numpy().argmax())
            row = at + (2 if header else 1)
            check_length(path, f"row {row}", df[col].iloc[at], "cell", f"column {col!r}")
        if df[col].map(lambda v: isinstance(v, str) and "\r" in v).any():
            df[col] = df[col].map(lambda v: normalise_newlines(v) if isinstance(v, str) else v)
    return df


def _header_names(text: str, sep: str, kwargs: dict) -> list[str] | None:
    """The header row as written (pandas renames a repeated name to ``name.1``)."""
    if kwargs.get("header", "infer") is None:
        return None
    first = pd.read_csv(
        io.StringIO(text), sep=sep, header=None, nrows=1, dtype=str, keep_default_na=False,
        comment=kwargs.get("comment"),
    )  # fmt: skip
    return [str(v) for v in first.iloc[0].tolist()] if len(first) else None


def read_table(path: str | os.PathLike, sep: str, what: str = "table", **kwargs) -> pd.DataFrame:
    """A delimited text table read by pandas; empty files, ragged rows, repeated column names
    and over-long cells are named (:func:`check_cells`)."""
    text = read_text(path, what)
    body = "\n".join(
        ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")
    )
    if not body.strip():
        raise InputError(path, "line 1", f"empty {what}: expected a header row and data rows")
    try:
        df = pd.read_csv(io.StringIO(text), sep=sep, **kwargs)
        names = _header_names(text, sep, kwargs)
    except pd.errors.EmptyDataError:
        raise InputError(
            path, "line 1", f"empty {what}: expected a header row and data rows"
        ) from None
    except pd.errors.ParserError as exc:
        raise InputError(path, _line_of(str(exc)), f"unreadable row ({exc})") from None
    if names is not None and len(names) == len(df.columns):
        df.columns = names  # as written, so that check_cells sees a repeated name
    return check_cells(df, path, what, header=names is not None)


def read_excel(path: str | os.PathLike, what: str = "workbook", **kwargs) -> pd.DataFrame:
    """The first sheet of an .xlsx workbook; a file that is no workbook is named, not a traceback."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, f"{what} not found")
    try:
        df = pd.read_excel(path, engine="openpyxl", **kwargs)
        header = kwargs.get("header", 0) is not None
        names = pd.read_excel(path, engine="openpyxl", header=None, nrows=1, dtype=str)
    except Exception as exc:  # zipfile.BadZipFile, KeyError, ValueError: openpyxl's many ways
        raise InputError(
            path, "sheet 1", f"not a readable .xlsx {what} ({type(exc).__name__}: {exc})"
        ) from None
    if header and len(names) and len(names.columns) == len(df.columns):
        df.columns = [str(v) for v in names.iloc[0].tolist()]
    return check_cells(df, path, what, header=header)


def _line_of(message: str) -> str | None:
    words = message.replace(",", " ").split()
    for i, word in enumerate(words[:-1]):
        if word == "line" and words[i + 1].isdigit():
            return f"line {words[i + 1]}"
    return None


class Template(str):
    """A prompt template's text that remembers the file it came from."""

    path: str

    def __new__(cls, text: str, path) -> Template:
        obj = super().__new__(cls, text)
        obj.path = str(path)
        return obj

    def __getnewargs__(self):  # copy, deepcopy (dataclasses.asdict) and pickle keep the path
        return (str(self), self.path)


def read_template(path: str | os.PathLike, strip: bool | str = False) -> Template:
    """A prompt template (``strip``: True for whitespace, or the characters removed at both ends);
    an empty one stops the run."""
    text = normalise_newlines(read_text(path, "prompt template"))  # no \r from a Windows editor
    if strip is not False:
        text = text.strip(None if strip is True else strip)
    if not text.strip():
        raise InputError(path, "line 1", "empty prompt template: every prompt would be blank")
    return Template(text, path)


def check_placeholders(template: str, placeholders) -> None:
    """Stop when a template lacks a placeholder it is filled with (its text would be lost).

    Only templates read by :func:`read_template` know their file; built-in strings pass unchecked.
    """
    path = getattr(template, "path", None)
    if path is None:
        return
    missing = [p for p in placeholders if p not in template]
    if missing:
        raise InputError(
            path,
            f"placeholder {missing[0]}",
            f"missing from the prompt template (it needs {', '.join(placeholders)}); "
            "without it every prompt would lack that text",
        )
