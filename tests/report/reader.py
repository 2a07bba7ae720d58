"""What a reader sees of a run's text files and pages: their words, titles and table headers,
for the checks that no page shows ``nan``/``None``, an internal id as its title or a
snake_case header (oncoeval.core.format)."""

from __future__ import annotations

import html
import re
from pathlib import Path

# A missing value written as the code holds it.
RAW_MISSING = re.compile(r"(?<![\w.-])(nan|NaN|None|<NA>)(?![\w-])")
SNAKE = re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]*\b")
TAGS = re.compile(r"<[^>]+>")
HIDDEN = re.compile(r"<(script|style)\b.*?</\1>", flags=re.S | re.I)


def visible_text(page: str) -> str:
    """The text of an HTML page as a reader sees it (no markup, scripts or styles)."""
    return html.unescape(TAGS.sub(" ", HIDDEN.sub(" ", page)))


def titles(page: str) -> list[str]:
    """The page's ``<title>`` and headings."""
    found = re.findall(r"<(title|h[1-3])\b[^>]*>(.*?)</\1>", page, flags=re.S | re.I)
    return [html.unescape(TAGS.sub("", text)).strip() for _, text in found]


def html_headers(page: str) -> list[str]:
    return [
        html.unescape(TAGS.sub("", cell)).strip()
        for cell in re.findall(r"<th\b[^>]*>(.*?)</th>", page, flags=re.S | re.I)
    ]


def markdown_headers(text: str) -> list[str]:
    """The header cells of every Markdown table (the row above its ``|:---|`` rule)."""
    lines = text.splitlines()
    out = []
    for above, line in zip(lines, lines[1:], strict=False):
        if re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", line.strip()):
            out += [cell.strip() for cell in above.strip().strip("|").split("|")]
    return out


def problems(path: Path, text: str, ids) -> list[str]:
    """What a reader must not meet in one text file or page: a missing value as ``nan`` /
    ``None``, an internal id (``ids``) in a title, a snake_case table header."""
    is_page = path.suffix == ".html"
    seen = visible_text(text) if is_page else text
    found = [f"{path}: shows {m!r}" for m in sorted(set(RAW_MISSING.findall(seen)))]
    for title in titles(text) if is_page else re.findall(r"^#+ (.*)$", text, flags=re.M):
        named = [i for i in ids if re.search(rf"(?<![\w-]){re.escape(i)}(?![\w-])", title)]
        if named or "tables/" in title:
            found.append(f"{path}: title {title!r} names {named or 'a path'}")
    headers = html_headers(text) if is_page else markdown_headers(text)
    snake = sorted({h for h in headers if SNAKE.search(h)})
    if snake:
        found.append(f"{path}: snake_case headers {snake[:5]}")
    return found
