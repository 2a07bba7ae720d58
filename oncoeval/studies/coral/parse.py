"""Parse namedtuple-style model output without executing it.

Models answer with lines such as ``RadTest(RadiologyTest='MRI', Datetime='{01/01/2020}', ...)``,
often malformed: sets inside strings (``Datetime='{01/01/2020', '02/03/2020}'``, as the
supplement's own examples write them), stray quotes, several tuples on one line, tuples wrapped
over two lines, numbering and prose around them. Only whitelisted tuple names and their fields
are read:

1. Each tuple is first tried as a Python call expression with ``ast.parse``; its arguments are
   read with ``ast.literal_eval`` one literal at a time (no name lookup, no call, nothing runs).
2. When that fails, a tokenizer splits the text at the whitelisted ``Field=`` keys and reads the
   quoted items of each value (braces and brackets dropped), or the bare text when unquoted.

Every line that names a tuple but yields no primary value, and every tuple-like line with a name
outside the whitelist, is a failure with a reason; plain prose lines are ignored.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from ...core.parsing import too_long
from ...core.records import Response
from .gold import pair_string
from .tasks import SUBTYPES, UNKNOWN

_APOS = "\x00"
# a capitalised name glued to "(" with a keyword argument before the next ")": an attempt at a
# tuple (found by _tuple_like, which scans forward once instead of from every "(")
_NAME_OPEN = re.compile(r"\b([A-Z]\w*)\(")
_KEYWORD = re.compile(r"\w\s*=")


@dataclass
class ParsedTuple:
    name: str
    fields: dict[str, list[str]]
    line_no: int
    raw: str
    method: str  # "ast" or "tokens"


@dataclass
class Failure:
    line_no: int
    reason: str
    raw: str


@dataclass
class ParseResult:
    tuples: list[ParsedTuple] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)


def _clean(value: str) -> str:
    value = value.replace(_APOS, "'")
    value = value.strip().strip(",").strip()
    value = value.strip("{}[]").strip().strip("'\"").strip()
    return " ".join(value.split())


def values_from_raw(raw: str) -> list[str]:
    """Items of one field's raw text: quoted items if any are quoted, else the bare text."""
    text = raw.replace("\\'", _APOS).replace('\\"', _APOS)
    text = re.sub(r"(?<=\w)'(?=\w)", _APOS, text)  # apostrophes inside words
    text = re.sub(r"[{}\[\]]", "", text).strip().rstrip(",").strip()
    quoted = [a if a else b for a, b in re.findall(r"'([^']*)'|\"([^\"]*)\"", text)]
    items = quoted if quoted else [text]
    return [v for v in (_clean(i) for i in items) if v]


def _literal_strings(node: ast.AST) -> list[str]:
    """Strings of one literal argument, in written order (sets keep their textual order)."""
    if isinstance(node, ast.Set | ast.List | ast.Tuple):
        out = []
        for elt in node.elts:
            out.extend(_literal_strings(elt))
        return out
    value = ast.literal_eval(node)
    return [str(value)]


def _parse_ast(name: str, text: str, fields: tuple[str, ...]) -> dict[str, list[str]] | None:
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # C parser: nesting too deep
        return None
    call = tree.body
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
        return None
    if call.func.id != name or len(call.args) > len(fields):
        return None
    by_lower = {f.lower(): f for f in fields}
    out: dict[str, list[str]] = {}
    try:
        for fname, arg in zip(fields, call.args, strict=False):
            out[fname] = _literal_strings(arg)
        for kw in call.keywords:
            if kw.arg is None or kw.arg.lower() not in by_lower:
                continue
            out[by_lower[kw.arg.lower()]] = _literal_strings(kw.value)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return None
    return {f: [v for v in (_clean(x) for x in vals) if v] for f, vals in out.items()}


def _parse_tokens(body: str, fields: tuple[str, ...]) -> dict[str, list[str]]:
    keys = re.compile(r"\b(" + "|".join(map(re.escape, fields)) + r")\s*=", re.IGNORECASE)
    by_lower = {f.lower(): f for f in fields}
    matches = list(keys.finditer(body))
    out: dict[str, list[str]] = {}
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(body)
        raw = body[m.end() : end]
        if i + 1 == len(matches) and ")" in raw:
            raw = raw[: raw.rindex(")")]
        out.setdefault(by_lower[m.group(1).lower()], values_from_raw(raw))
    return out


def _tuple_like(line: str) -> str | None:
    """The first capitalised name glued to "(" with ``name=`` before the next ")", if any."""
    keyword = close = None
    for m in _NAME_OPEN.finditer(line):
        if keyword is None or keyword.start() < m.end():
            keyword = _KEYWORD.search(line, m.end())
            if keyword is None:
                return None
        if close is None or close < m.end():
            close = line.find(")", m.end())
            close = len(line) if close < 0 else close
        if keyword.end() <= close:
            return m.group(1)
    return None


def _join_wrapped(lines: list[str], names: re.Pattern) -> list[tuple[int, str]]:
    """Join a tuple broken over lines (more '(' than ')' and no new tuple on the next line)."""
    out: list[tuple[int, str]] = []
    parts, start, balance = None, 0, 0  # the tuple being joined; its count of "(" less ")"
    for no, line in enumerate(lines, start=1):
        has_name = names.search(line) is not None
        if parts is not None and not has_name:
            parts.append(line.strip())
        else:
            if parts is not None:
                out.append((start, " ".join(parts)))
            parts, start, balance = [line], no, 0
        balance += line.count("(") - line.count(")")
        if balance <= 0 or (len(parts) == 1 and not has_name):
            out.append((start, " ".join(parts)))
            parts = None
    if parts is not None:
        out.append((start, " ".join(parts)))
    return out


def parse_response(text: str | None, allowed: dict[str, tuple[str, ...]]) -> ParseResult:
    """Tuples of ``allowed`` names (name -> fields, primary first) found in ``text``."""
    result = ParseResult()
    if not text:
        return result
    if too_long(text):
        result.failures.append(Failure(0, too_long(text), text[:200]))
        return result
    by_lower = {n.lower(): n for n in allowed}
    names = re.compile(r"\b(" + "|".join(map(re.escape, allowed)) + r")\s*\(", re.IGNORECASE)
    lines = [ln for ln in text.replace("\r\n", "\n").split("\n")]
    for line_no, line in _join_wrapped(lines, names):
        stripped = line.strip()
        if not stripped or stripped.startswith("```"):
            continue
        starts = list(names.finditer(stripped))
        if not starts:
            other = _tuple_like(stripped)
            if other:
                result.failures.append(
                    Failure(line_no, f"tuple name {other!r} not asked for", stripped)
                )
            continue
        for i, m in enumerate(starts):
            name = by_lower[m.group(1).lower()]
            fields = allowed[name]
            end = starts[i + 1].start() if i + 1 < len(starts) else len(stripped)
            chunk = stripped[m.start() : end].rstrip().rstrip(",;")
            body = chunk[m.end() - m.start() :]
            call = f"{name}({body[: body.rindex(')')]})" if ")" in body else None
            parsed = _parse_ast(name, call, fields) if call else None
            method = "ast"
            if parsed is None:
                parsed, method = _parse_tokens(body, fields), "tokens"
            if not parsed.get(fields[0]):
                reason = f"no {fields[0]} value in {name}"
                result.failures.append(Failure(line_no, reason, chunk))
                continue
            for f in fields[1:]:
                parsed.setdefault(f, [])
                if not parsed[f]:
                    parsed[f] = [UNKNOWN]
            result.tuples.append(ParsedTuple(name, parsed, line_no, chunk, method))
    return result


# The parse stage: one response -> rows of parsed/{model}.tsv.
PARSED_COLUMNS = [
    "doc_id",
    "section",
    "subtype",
    "status",
    "line_no",
    "tuple_index",
    "tuple_name",
    "field",
    "primary",
    "field_value",
    "value",
    "method",
    "reason",
    "raw",
]


def allowed_tuples(subtype: str) -> dict[str, tuple[str, ...]]:
    st = SUBTYPES[subtype]
    return {st.tuple_name: st.all_fields, **st.extra_tuples}


def parsed_rows(response: Response) -> list[dict]:
    """Rows of parsed/{model}.tsv for one response: tuples, failures, or one status row."""
    meta = response.meta
    base = {k: meta[k] for k in ("doc_id", "section", "subtype")}
    blank = dict.fromkeys(PARSED_COLUMNS, "")
    if response.error is not None or response.text is None:
        return [{**blank, **base, "status": "error", "reason": response.error or "no text"}]
    st = SUBTYPES[base["subtype"]]
    result = parse_response(response.text, allowed_tuples(base["subtype"]))
    rows = []
    for index, tup in enumerate(result.tuples):
        if tup.name == st.tuple_name:
            primary = ", ".join(tup.fields[st.primary])
            fields = st.fields
        else:  # extra tuples (CancerDiagnosis): no primary entity, shown but not scored
            primary, fields = "", tuple(st.extra_tuples[tup.name])
        for f in fields:
            for v in tup.fields.get(f) or [UNKNOWN]:
                rows.append(
                    {
                        **blank,
                        **base,
                        "status": "ok",
                        "line_no": tup.line_no,
                        "tuple_index": index,
                        "tuple_name": tup.name,
                        "field": f,
                        "primary": primary,
                        "field_value": v,
                        "value": pair_string(primary, v) if primary else v,
                        "method": tup.method,
                        "raw": tup.raw,
                    }
                )
    for fail in result.failures:
        rows.append(
            {
                **blank,
                **base,
                "status": "failed",
                "line_no": fail.line_no,
                "reason": fail.reason,
                "raw": fail.raw,
            }
        )
    if not rows:
        rows.append({**blank, **base, "status": "empty", "reason": "no tuples in the answer"})
    return rows
