"""Model output -> a normalised list of side effects (§4.1-4.2).

Bullets of any style (``•``, ``-``, ``*``, ``–``, ``1.``, ``2)``) are list items; their text is
stripped of the marker, Markdown emphasis and trailing punctuation, lower-cased, and exact
duplicates and empties are dropped. Every other non-empty line (a preamble, a heading, a list item
that ends with ``:`` and so names a category, a rule such as ``---``) is not a side effect: it is counted in
``n_non_list_lines`` and kept out of the list.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from ...parsing import too_long

_BULLET = re.compile(
    r"^\s*(?:[•\-*–—·▪●◦‣+]\s*|\(?\d{1,3}[.)\]:]\s+|\(?[a-zA-Z][.)]\s+)(?P<item>.*)$"
)
_EMPHASIS = re.compile(r"(\*\*|__|\*|`)")


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
    text = _EMPHASIS.sub("", text)
    text = " ".join(text.split()).strip(" .,;")
    return text.lower()


def parse_list(text: str | None, error: str | None = None) -> ParsedList:
    """Normalise one response; a failed call or an empty list is a status, never an exception."""
    if error is not None or text is None:
        return ParsedList(status="error", reason=error or "no text")
    if too_long(text):  # unread, so never matched as if it were an (empty) list
        return ParsedList(status="error", reason=too_long(text))
    out = ParsedList()
    seen: set[str] = set()
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _BULLET.match(line)
        item = clean_item(match.group("item")) if match else ""
        if not match or not re.search(r"\w", item) or item.endswith(":"):
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
