"""From a model's answer (or an expert's label) to a validated guideline path.

:func:`parse_answer` finds the path in free text: reasoning blocks (``<think>...</think>``) are
dropped, a JSON object (bare or in a code fence) is read for ``final_path``, and failing that
the longest chain of node ids joined by arrows (``->``, ``>``, ``→``, ``=>``) is taken. The
answer ``NOT_GUIDELINE_COMPLIANT`` is a valid one-node path. :func:`check_path` validates a path
against the tree and names what is wrong. Every failure is a reason string, never an exception.

The parse stage (:func:`parse_rollouts`) turns one model's responses into its rollouts table:
one row per rollout with the parsed path, its validity and why it is invalid.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...core.io import write_table
from ...core.parsing import bracket_spans, too_long
from ...core.records import Response, read_responses
from .tree import NOT_COMPLIANT, GuidelineTree, load_prepared_tree

log = logging.getLogger(__name__)

# Kinds of invalid predictions, counted in the tables (order = order of the checks).
INVALID_KINDS = (
    "generation_error",  # the model call failed (response.error)
    "no_answer",  # no path and no NOT_GUIDELINE_COMPLIANT found in the text
    "unknown_node",  # a node id that is not in the tree
    "not_from_root",  # the path does not start at the tree's root
    "broken_edge",  # two consecutive nodes that are not parent -> child
    "repeated_node",  # a node visited twice
    "not_terminal",  # the path stops before a recommendation or information-limited node
    "too_long",  # the answer is over the parsers' length cap (oncoeval.core.parsing), not read
)

_THINK_OPEN = re.compile(r"<(think|thinking|reasoning)>", re.I)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_ARROW = r"\s*(?:->|=>|→|⟶|—>|–>|>)\s*"
_NODE = r"[A-Za-z][A-Za-z0-9]*-\d+-\d+"
# starts only where a word starts: inside a long run of letters every start would rescan the run
_CHAIN = re.compile(rf"(?<![A-Za-z0-9]){_NODE}(?:{_ARROW}{_NODE})*")
_NC = re.compile(r"NOT[\s_-]*GUIDELINE[\s_-]*COMPLIANT", re.I)
# the token itself (as the study's scripts test it), not an English phrase in a reason
_NC_TOKEN = re.compile(r"NOT_GUIDELINE_COMPLIANT")
_REASON_NC = re.compile(r"\"reason\"\s*:\s*\"[^\"]*NOT_GUIDELINE_COMPLIANT")
_SPLIT = re.compile(r"->|=>|→|⟶|—>|–>|>|,")  # parts are stripped after the split


@dataclass(frozen=True)
class Parsed:
    """A parsed answer: ``path`` (node ids, or ``[NOT_COMPLIANT]``) or ``None`` with ``reason``."""

    path: tuple[str, ...] | None
    reason: str | None = None
    method: str = ""  # json | text | label
    explanation: str = ""  # the reason given with NOT_GUIDELINE_COMPLIANT, if any

    @property
    def ok(self) -> bool:
        return self.path is not None


def strip_reasoning(text: str) -> str:
    """Drop closed reasoning blocks; with an unclosed one keep only what follows its last close."""
    kept, pos, start, unclosed = [], 0, 0, set()
    while match := _THINK_OPEN.search(text, start):  # closed blocks, one forward pass
        tag, start = match.group(1).lower(), match.end()
        if tag in unclosed:  # no close of this tag further on: skip without searching again
            continue
        close = re.compile(rf"</{tag}>", re.I).search(text, match.end())
        if close is None:
            unclosed.add(tag)
            continue
        kept.append(text[pos : match.start()])
        pos = start = close.end()
    text = " ".join([*kept, text[pos:]])
    for tag in ("</think>", "</thinking>", "</reasoning>"):
        if tag in text:
            text = text.rsplit(tag, 1)[1]
    return text


def split_path(value: str) -> tuple[str, ...]:
    """``"A -> B > C → D"`` (or a comma list) -> ``("A", "B", "C", "D")``; ids upper-cased."""
    parts = [p.strip().strip("\"'[]`.") for p in _SPLIT.split(value.strip())]
    return tuple(p.upper() for p in parts if p)


def _json_candidates(text: str):
    yield from _FENCE.findall(text)
    # bare objects: from each "{" to its matching "}"
    for start, end in bracket_spans(text, "{"):
        yield text[start:end]


def _from_json(obj) -> Parsed | None:
    if not isinstance(obj, dict):
        return None
    keys = {k.lower(): k for k in obj}
    value = None
    for name in ("final_path", "path", "answer"):
        if name in keys:
            value = obj[keys[name]]
            break
    explanation = str(obj.get(keys.get("reason", ""), "") or "")
    if _NC_TOKEN.search(explanation):
        # the study reads a reason that names non-compliance as the non-compliant answer,
        # whatever final_path says (the public evaluation script does the same)
        return Parsed((NOT_COMPLIANT,), method="json", explanation=explanation)
    if value is None:
        for key, val in obj.items():
            if _NC.fullmatch(str(key).strip()) or (isinstance(val, str) and _NC.search(val)):
                return Parsed((NOT_COMPLIANT,), method="json", explanation=explanation)
        return None
    if isinstance(value, list):
        value = " -> ".join(str(v) for v in value)
    value = str(value)
    if _NC.search(value):
        return Parsed((NOT_COMPLIANT,), method="json", explanation=explanation)
    path = split_path(value)
    if not path:
        return Parsed(None, "no_answer", method="json")
    return Parsed(path, method="json")


def parse_answer(text: str | None) -> Parsed:
    """Parse a model's answer; ``Parsed.path`` is None and ``reason`` says why when it fails."""
    if text is None or not text.strip():
        return Parsed(None, "no_answer")
    if too_long(text):
        return Parsed(None, "too_long")
    body = strip_reasoning(text)
    for candidate in _json_candidates(body):
        try:
            obj = json.loads(candidate)
        # a fenced block nested past the stack, or an integer past 4,300 digits (ValueError)
        except (ValueError, RecursionError):
            continue
        parsed = _from_json(obj)
        if parsed is not None:
            return parsed
    # a "final_path": "..." line inside broken JSON, then any chain of node ids
    if _REASON_NC.search(body):
        return Parsed((NOT_COMPLIANT,), method="text")
    m = re.search(r"final_path\W*[:=]\s*\"?([^\"\n}]*)", body, re.I)
    if m and _NC.search(m.group(1)):
        return Parsed((NOT_COMPLIANT,), method="text")
    if m and re.search(_NODE, m.group(1)):
        return Parsed(split_path(m.group(1)), method="text")
    chains = [c.group(0) for c in _CHAIN.finditer(body)]
    if chains:
        best = max(chains, key=lambda c: len(split_path(c)))  # first longest
        return Parsed(split_path(best), method="text")
    if _NC.search(body):
        return Parsed((NOT_COMPLIANT,), method="text")
    return Parsed(None, "no_answer")


def parse_label(value: str | None) -> Parsed:
    """An expert label: a path ``A -> B -> ...`` or ``NOT_GUIDELINE_COMPLIANT``."""
    if value is None or not str(value).strip():
        return Parsed(None, "no_answer", method="label")
    value = str(value)
    if _NC.fullmatch(value.strip()):
        return Parsed((NOT_COMPLIANT,), method="label")
    path = split_path(value)
    return Parsed(path, method="label") if path else Parsed(None, "no_answer", method="label")


def trim_surveillance(tree: GuidelineTree, path: tuple[str, ...]) -> tuple[str, ...]:
    """Drop trailing surveillance nodes (the study scores the path up to the treatment)."""
    path = tuple(path)
    while len(path) > 1 and path[-1] in tree and tree.nodes[path[-1]].surveillance:
        path = path[:-1]
    return path


def check_path(tree: GuidelineTree, path: tuple[str, ...]) -> str | None:
    """None when ``path`` is a valid guideline path, else the kind of problem (INVALID_KINDS)."""
    if not path:
        return "no_answer"
    if tuple(path) == (NOT_COMPLIANT,):
        return None
    if any(n not in tree for n in path):
        return "unknown_node"
    if path[0] != tree.root:
        return "not_from_root"
    if len(set(path)) != len(path):
        return "repeated_node"
    if any(not tree.is_edge(a, b) for a, b in zip(path, path[1:], strict=False)):
        return "broken_edge"
    if not tree.nodes[path[-1]].terminal:
        return "not_terminal"
    return None


def format_path(path) -> str:
    return "" if not path else " -> ".join(path)


# ---------------------------------------------------------------- the parse stage
ROLLOUT_COLUMNS = [
    "patient_id",
    "rollout",
    "path",
    "valid",
    "invalid_reason",
    "note_set",
    "answer",
    "parse_method",
]


def parse_response(tree, resp: Response, trim: bool) -> dict:
    """One rollout row: the parsed (and trimmed) path, its validity and why it is invalid."""
    if resp.error:
        return {"path": "", "valid": False, "invalid_reason": "generation_error", "answer": "none"}
    parsed = parse_answer(resp.text)
    if not parsed.ok:
        return {"path": "", "valid": False, "invalid_reason": parsed.reason, "answer": "none"}
    path = trim_surveillance(tree, parsed.path) if trim else parsed.path
    problem = check_path(tree, path)
    return {
        "path": format_path(path),
        "valid": problem is None,
        "invalid_reason": problem or "",
        "answer": "not_compliant" if path == (NOT_COMPLIANT,) else "path",
        "parse_method": parsed.method,
    }


def parse_rollouts(tree_path, responses_path, trim: bool, out) -> pd.DataFrame:
    tree = load_prepared_tree(tree_path)
    rows = []
    for resp in read_responses(responses_path):
        meta = resp.meta or {}
        row = {
            "patient_id": meta.get("patient_id", resp.request_id.rsplit("#r", 1)[0]),
            "rollout": int(meta.get("rollout", resp.request_id.rsplit("#r", 1)[-1])),
            "note_set": meta.get("note_set", ""),
            "parse_method": "",
        }
        row.update(parse_response(tree, resp, trim))
        rows.append(row)
    df = pd.DataFrame(rows, columns=ROLLOUT_COLUMNS)
    write_table(df, out)
    counts = df.loc[~df["valid"], "invalid_reason"].value_counts().to_dict()
    log.info("%d rollouts, %d valid; invalid by kind: %s", len(df), int(df["valid"].sum()), counts)
    return df


def _path(value):
    if value is None or (isinstance(value, float) and np.isnan(value)) or value == "":
        return None
    return tuple(p.strip() for p in str(value).split("->"))


def paths_by_patient(rollouts: pd.DataFrame) -> dict[str, list]:
    """Each patient's rollout paths; failed calls are no prediction and are left out (unscored)."""
    out: dict[str, list] = {}
    answered = rollouts[rollouts["invalid_reason"].astype(str) != "generation_error"]
    for row in answered.sort_values(["patient_id", "rollout"]).itertuples():
        out.setdefault(str(row.patient_id), []).append(_path(row.path))
    return out


def read_rollouts(path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype={"patient_id": str}, keep_default_na=False)
