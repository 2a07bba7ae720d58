"""Guards shared by the parsers of model output: a length cap and a linear JSON scanner.

Every parser turns any string into a value or a recorded failure. Texts longer than
:data:`MAX_ANSWER_CHARS` are not read at all but recorded as a ``too_long`` failure; anything up to
the cap parses in well under a second (``tests/test_parser_fuzz.py``), because each parser is linear
in its input: no regex that backtracks over a run of characters, no recursion whose depth the model
chooses. JSON embedded in prose is found by :func:`json_spans`, one pass with a bracket stack, and
only spans nested at most :data:`MAX_JSON_DEPTH` deep are decoded.
"""

from __future__ import annotations

import json
import json.scanner
import re
from collections.abc import Iterator

# 16,000 new tokens (the guidelines paper's rollout budget) are about 64,000 characters of prose;
# the cap leaves three times that.
MAX_ANSWER_CHARS = 200_000
TOO_LONG = "too_long"
# Model answers hold flat objects (a score, a path, a list of questions); deeper spans are skipped.
MAX_JSON_DEPTH = 32

# the C scanner behind json.loads, called directly: spans are many and mostly small
_scan_json = json.scanner.make_scanner(json.JSONDecoder())
_CLOSE_OF = {"{": "}", "[": "]"}
_OPEN_OF = {"}": "{", "]": "["}
_SPECIAL = re.compile(r'[{}\[\]"\\\n]')  # the characters the scanner acts on


def too_long(text: str | None) -> str | None:
    """The ``too_long`` failure reason when ``text`` is over the cap, else None."""
    if text is not None and len(text) > MAX_ANSWER_CHARS:
        return f"{TOO_LONG}: {len(text)} characters, over the {MAX_ANSWER_CHARS} a parser reads"
    return None


def bracket_spans(text: str, openers: str = "{[") -> list[tuple[int, int]]:
    """``(start, end)`` of every balanced bracket span in ``text``, ordered by start.

    One pass with a stack: inside brackets a double-quoted string (backslash escapes, ended by its
    quote or a newline) hides the brackets it holds, as in JSON; outside brackets quotes are prose.
    A closer that matches no open bracket is ignored; an opener closed by the wrong kind of bracket
    gives no span. Spans holding brackets nested more than :data:`MAX_JSON_DEPTH` deep are left
    out, so a caller decoding them never recurses deeply and decodes each character at most
    ``MAX_JSON_DEPTH + 1`` times.
    """
    spans = []
    starts: list[int] = []  # the open brackets, innermost last (text[start] is the kind)
    deepest: list[int] = []  # per open bracket, the deepest level reached inside it
    open_count = dict.fromkeys(_CLOSE_OF, 0)  # a closer with no opener is skipped at once
    in_string, skip = False, -1  # skip: the position a backslash escapes
    for match in _SPECIAL.finditer(text):
        i = match.start()
        ch = text[i]
        if in_string:
            if i == skip:
                continue
            if ch == "\\":
                skip = i + 1
            elif ch == '"' or ch == "\n":
                in_string = False
        elif ch == '"':
            in_string = bool(starts)
        elif ch in _CLOSE_OF:
            starts.append(i)
            deepest.append(len(starts))
            open_count[ch] += 1
        elif ch in _OPEN_OF and open_count[_OPEN_OF[ch]]:
            level = len(starts)
            while text[starts[level - 1]] != _OPEN_OF[ch]:
                level -= 1
            if level < len(starts):  # brackets left open inside are dropped
                deepest[level - 1] = max(deepest[level - 1 :])
                for start in starts[level:]:
                    open_count[text[start]] -= 1
                del starts[level:], deepest[level:]
            start, deep = starts.pop(), deepest.pop()
            open_count[text[start]] -= 1
            if text[start] in openers and deep - level <= MAX_JSON_DEPTH:
                spans.append((start, i + 1))
            if deepest and deepest[-1] < deep:
                deepest[-1] = deep
    spans.sort()
    return spans


def json_spans(
    text: str, openers: str = "{[", nested: bool = False
) -> Iterator[tuple[int, object]]:
    """``(start, value)`` of the JSON values among :func:`bracket_spans`, in textual order.

    Without ``nested``, spans inside a value already decoded are skipped (the outer value holds
    them); a span that is not valid JSON is skipped and the spans inside it are tried.
    """
    decoded_to = 0
    for start, end in bracket_spans(text, openers):
        if start < decoded_to:
            continue
        try:
            value, stop = _scan_json(text[start:end], 0)
        # ValueError: JSONDecodeError, and an integer over Python's 4,300-digit limit
        except (StopIteration, ValueError, RecursionError):
            continue
        if stop != end - start:
            continue
        if not nested:
            decoded_to = end
        yield start, value
