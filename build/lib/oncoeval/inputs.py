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


def read_json(path: str | os.PathLike, what: str = "file"):
    text = read_text(path, what)
    if not text.strip():
        raise InputError(path, "line 1", f"empty {what}: expected JSON")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"line {exc.lineno}", f"not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise InputError(path, None, "JSON nested too deeply to read") from None


def read_table(path: str | os.PathLike, sep: str, what: str = "table", **kwargs) -> pd.DataFrame:
    """A delimited text table read by pandas; empty files and ragged rows are named."""
    text = read_text(path, what)
    body = "\n".join(
        ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")
    )
    if not body.strip():
        raise InputError(path, "line 1", f"empty {what}: expected a header row and data rows")
    try:
        return pd.read_csv(io.StringIO(text), sep=sep, **kwargs)
    except pd.errors.EmptyDataError:
        raise InputError(
            path, "line 1", f"empty {what}: expected a header row and data rows"
        ) from None
    except pd.errors.ParserError as exc:
        raise InputError(path, _line_of(str(exc)), f"unreadable row ({exc})") from None


def read_excel(path: str | os.PathLike, what: str = "workbook", **kwargs) -> pd.DataFrame:
    """The first sheet of an .xlsx workbook; a file that is no workbook is named, not a traceback."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, f"{what} not found")
    try:
        return pd.read_excel(path, engine="openpyxl", **kwargs)
    except Exception as exc:  # zipfile.BadZipFile, KeyError, ValueError: openpyxl's many ways
        raise InputError(
            path, "sheet 1", f"not a readable .xlsx {what} ({type(exc).__name__}: {exc})"
        ) from None


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
    text = read_text(path, "prompt template")
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
