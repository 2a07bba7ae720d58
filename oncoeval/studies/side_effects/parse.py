"""Parse stage: model output -> a normalised list of side effects (§4.1-4.2).

Three answer shapes give their items:

- bullets of any style (``•``, ``-``, ``*``, ``–``, ``1.``, ``2)``), one per line;
- inline bullets, several items on one line (``• Fatigue • Nausea``);
- no markers at all, one item per line, as the grounded prompts show the vocabulary. Used only
  when no line of the answer has a marker; lines that read as prose (a preamble, a closing
  remark, a question) are not items.

An item's text is stripped of the marker, Markdown emphasis, trailing annotations (``(common)``,
``- onset: acute``, ``: rare``) and trailing punctuation, then lower-cased; exact duplicates and
empties are dropped. Every other non-empty line (a preamble, a heading, a line that ends with
``:`` and so names a category, a rule such as ``---``) is not a side effect: it is counted in
``n_non_list_lines`` and kept out of the list.
"""

from __future__ import annotations

import logging
import re
from dataclasses import asdict, dataclass, field

import pandas as pd

from ...core.io import write_jsonl
from ...core.parsing import too_long
from ...core.records import Response, read_responses

log = logging.getLogger(__name__)

_BULLET = re.compile(
    r"^\s*(?:[•\-*–—·▪●◦‣+]\s*|\(?\d{1,3}[.)\]:]\s+|\(?[a-zA-Z][.)]\s+)(?P<item>.*)$"
)
_INLINE_BULLET = re.compile(r"[•▪●◦‣]")
_EMPHASIS = re.compile(r"(\*\*|__|\*|`)")
# A trailing annotation: "(common)", " - onset: acute", " – rare", ": long term".
_TRAILING_PAREN = re.compile(r"\s*[(\[][^()\[\]]*[)\]]\s*$")
_TRAILING_NOTE = re.compile(r"(?:\s+[-–—]\s+|\s*:\s+).*$")
# Words that open a sentence rather than name a side effect, in an answer without markers.
_PROSE_START = {
    "here", "these", "this", "the", "i", "i'm", "please", "note", "based", "as", "it", "you",
    "your", "consult", "overall", "potential", "possible", "common", "side", "in", "for", "if",
    "sure", "certainly", "let", "they", "we", "some", "other", "remember", "always",
}  # fmt: skip
_MAX_PLAIN_WORDS = 10
_HEADING_WORD = re.compile(r"\b(?:side\s+)?effects\b", re.I)


@dataclass
class ParsedList:
    items: list[str] = field(default_factory=list)
    n_non_list_lines: int = 0
    n_duplicates: int = 0
    status: str = "ok"  # ok | empty | error
    reason: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def clean_item(text: str) -> str:
    """An item's name: emphasis, trailing annotations and punctuation removed, lower case."""
    text = " ".join(_EMPHASIS.sub("", text).split()).strip(" .,;")
    for _ in range(3):  # "(common) (short term)": a few trailing groups, never the whole name
        shorter = _TRAILING_PAREN.sub("", text).strip(" .,;")
        if shorter == text or not shorter:
            break
        text = shorter
    if not text.endswith(":"):
        text = _TRAILING_NOTE.sub("", text).strip(" .,;") or text
    return text.lower()


def _is_prose(line: str) -> bool:
    words = line.split()
    first = words[0].lower().strip("*_`\"'") if words else ""
    return (
        len(words) > _MAX_PLAIN_WORDS
        or first in _PROSE_START
        or line.rstrip().endswith(("?", "!", ":"))
        or _HEADING_WORD.search(line) is not None  # "Short-term effects", "Side effects"
    )


def _candidates(text: str) -> list[tuple[str | None, str]]:
    """(item text or None for a non-list line, the line) for every non-empty line."""
    lines = [line for line in text.splitlines() if line.strip()]
    marked = [_BULLET.match(line) for line in lines]
    any_marker = any(marked) or any(len(_INLINE_BULLET.findall(line)) > 1 for line in lines)
    out = []
    for line, match in zip(lines, marked, strict=True):
        pieces = [p.strip() for p in _INLINE_BULLET.split(line) if p.strip()]
        if len(_INLINE_BULLET.findall(line)) > 1 and len(pieces) > 1:
            out += [(p, line) for p in pieces]  # inline bullets: one item each
        elif match:
            out.append((match.group("item"), line))
        elif not any_marker and not _is_prose(line):
            out.append((line, line))  # an answer without markers: one item per line
        else:
            out.append((None, line))
    return out


def parse_list(text: str | None, error: str | None = None) -> ParsedList:
    """Normalise one response; a failed call or an empty list is a status, never an exception."""
    if error is not None or text is None:
        return ParsedList(status="error", reason=error or "no text")
    if too_long(text):  # unread, so never matched as if it were an (empty) list
        return ParsedList(status="error", reason=too_long(text))
    out = ParsedList()
    seen: set[str] = set()
    for raw, _line in _candidates(text):
        item = clean_item(raw) if raw is not None else ""
        if raw is None or not re.search(r"\w", item) or item.endswith(":"):
            out.n_non_list_lines += 1
            continue
        if item in seen:
            out.n_duplicates += 1
            continue
        seen.add(item)
        out.items.append(item)
    if not out.items:
        out.status, out.reason = "empty", "no list items in the response"
    return out


def parse_responses(responses: list[Response]) -> list[dict]:
    rows = []
    for resp in responses:
        parsed = parse_list(resp.text, resp.error)
        meta = resp.meta or {}
        rows.append(
            {
                "request_id": resp.request_id,
                "profile_id": meta.get("profile_id"),
                "variant": meta.get("variant"),
                "regime": meta.get("regime"),
                "site": meta.get("site"),
                **parsed.to_dict(),
            }
        )
    return rows


def parse_file(responses_path, out_path) -> dict:
    rows = parse_responses(read_responses(responses_path))
    write_jsonl(out_path, rows)
    counts = pd.Series([r["status"] for r in rows], dtype=object).value_counts().to_dict()
    log.info("parsed %d responses: %s", len(rows), counts)
    return counts
