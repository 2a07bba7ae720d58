"""Semantic matching of two lists of side effects, one-to-one (§3.5, §4.2).

Every matcher answers the same question for a batch of :class:`MatchTask` (a ``left`` list, e.g.
a model's predictions, and a ``right`` list, e.g. the reference items of the profile's site): which
(left index, right index) pairs mean the same side effect, each item used at most once. Matches are
restricted to the items actually in ``left``: nothing is matched that was not predicted.

Every matcher ends in the same assignment (:func:`assign`):

- identical strings (after :func:`norm_key`) are always paired first;
- two distinct terms of the reference vocabulary are never paired with each other (a model that
  writes ``breast pain`` has not named ``breast swelling``, however close their embeddings);
- among the remaining admissible pairs, the one-to-one assignment with the highest total similarity
  (``scipy.optimize.linear_sum_assignment``).

The matchers differ in what is admissible and how similar it is:

- ``lexical``: exact match after normalisation and a synonym table (similarity 1).
- ``embedding``: cosine similarity of sentence embeddings (all-MiniLM-L6-v2 by default) at or
  above a threshold. The threshold was chosen on ``resources/side_effects/matcher_validation.tsv``
  (see :mod:`.validation`).
- ``llm``: a judge model, called through the ``generate`` rule, lists matched pairs, one
  ``A2 = B5`` per line (or ``NONE``). It is two steps around ``generate``:
  :meth:`LLMMatcher.requests` and :meth:`LLMMatcher.read`. Only what the judge asserts counts:
  reasoning blocks are removed, only lines that are nothing but a pair are pairs, and an answer
  with other text naming items, a truncated answer or contradictory pairs is recorded with its
  reason (status ``unparseable``, ``truncated`` or ``contradictory``), never scored.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from scipy.optimize import linear_sum_assignment

from ...core.inputs import check_placeholders, read_template
from ...core.parsing import too_long
from ...core.records import Request, Response, verdict_problem
from .aliases import AliasTable, norm_key

log = logging.getLogger(__name__)

METHODS = ("lexical", "embedding", "llm")


@dataclass(frozen=True)
class MatchTask:
    key: str
    left: list[str]
    right: list[str]


@dataclass
class MatchResult:
    pairs: list[tuple[int, int]] = field(default_factory=list)
    status: str = "ok"  # ok | unparseable | truncated | contradictory | error
    reason: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def one_to_one(
    score: np.ndarray, admissible: np.ndarray, most_pairs_first: bool = False
) -> list[tuple[int, int]]:
    """Pairs of the one-to-one assignment among admissible cells with the highest total score.

    ``most_pairs_first`` is the rule this project used before (kept to compare on the validation
    set): weights ``big + score`` (``big`` exceeds any attainable score sum of a smaller matching)
    make the maximum-weight assignment a maximum-cardinality one first.
    """
    if score.size == 0 or not admissible.any():
        return []
    score = np.clip(score, 0.0, 1.0)
    big = float(min(score.shape) + 1) if most_pairs_first else 0.0
    # Inadmissible cells weigh 0 and are dropped afterwards: they never add to the total.
    weight = np.where(admissible, big + score, 0.0)
    rows, cols = linear_sum_assignment(weight, maximize=True)
    return sorted((int(i), int(j)) for i, j in zip(rows, cols, strict=True) if admissible[i, j])


def assign(
    left: list[str],
    right: list[str],
    score: np.ndarray,
    admissible: np.ndarray,
    vocabulary: Iterable[str] = (),
    guard: bool = True,
    most_pairs_first: bool = False,
) -> list[tuple[int, int]]:
    """The assignment every matcher ends in (see the module docstring).

    ``guard`` off and ``most_pairs_first`` on give the earlier rule, for the validation table only.
    """
    lkeys, rkeys = [norm_key(t) for t in left], [norm_key(t) for t in right]
    admissible = np.array(admissible, dtype=bool).reshape(len(left), len(right))
    score = np.array(score, dtype=float).reshape(len(left), len(right))
    pairs, used_left, used_right = [], set(), set()
    if guard:
        for i, key in enumerate(lkeys):
            j = next((j for j, rk in enumerate(rkeys) if rk == key and j not in used_right), None)
            if j is not None:
                pairs.append((i, j))
                used_left.add(i)
                used_right.add(j)
        vocab = {norm_key(t) for t in vocabulary}
        in_vocab_left = np.array([k in vocab for k in lkeys], dtype=bool)
        in_vocab_right = np.array([k in vocab for k in rkeys], dtype=bool)
        distinct = np.array(lkeys, dtype=object)[:, None] != np.array(rkeys, dtype=object)[None, :]
        if len(left) and len(right):
            admissible &= ~(in_vocab_left[:, None] & in_vocab_right[None, :] & distinct)
        admissible[sorted(used_left), :] = False
        admissible[:, sorted(used_right)] = False
    pairs += one_to_one(score, admissible, most_pairs_first)
    return sorted(pairs)


class LexicalMatcher:
    name = "lexical"

    def __init__(self, synonyms: AliasTable | None = None):
        self.synonyms = synonyms or AliasTable()

    def canonical(self, text: str) -> str:
        found = self.synonyms.lookup(text)
        return norm_key(found if found is not None else text)

    def run(self, tasks: list[MatchTask], vocabulary: Iterable[str] = ()) -> dict[str, MatchResult]:
        vocabulary = list(vocabulary)
        out = {}
        for task in tasks:
            left = np.array([self.canonical(t) for t in task.left], dtype=object)
            right = np.array([self.canonical(t) for t in task.right], dtype=object)
            same = np.zeros((len(left), len(right)), dtype=bool)
            if len(left) and len(right):
                same = np.asarray(left[:, None] == right[None, :], dtype=bool)
            pairs = assign(task.left, task.right, same.astype(float), same, vocabulary)
            out[task.key] = MatchResult(pairs)
        return out


class EmbeddingMatcher:
    """Loads the sentence-embedding model once; every task of a job shares it."""

    name = "embedding"

    def __init__(
        self,
        model_path: str | Path,
        threshold: float,
        batch_size: int = 64,
        guard: bool = True,
        most_pairs_first: bool = False,
    ):
        from sentence_transformers import SentenceTransformer  # heavy: only when used

        self.threshold = float(threshold)
        self.batch_size = batch_size
        self.guard = guard
        self.most_pairs_first = most_pairs_first
        self.model = SentenceTransformer(str(model_path), device="cpu")
        self._vectors: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str]) -> dict[str, np.ndarray]:
        """Unit vectors of ``texts``; each distinct text is encoded once per matcher."""
        missing = sorted(set(texts) - set(self._vectors))
        if missing:
            vectors = self.model.encode(
                missing,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
            )
            self._vectors.update(zip(missing, vectors, strict=True))
        return {t: self._vectors[t] for t in set(texts)}

    def similarity(self, left: list[str], right: list[str], vectors=None) -> np.ndarray:
        vectors = vectors or self.embed(left + right)
        if not left or not right:
            return np.zeros((len(left), len(right)))
        a = np.stack([vectors[t] for t in left])
        b = np.stack([vectors[t] for t in right])
        return a @ b.T

    def run(self, tasks: list[MatchTask], vocabulary: Iterable[str] = ()) -> dict[str, MatchResult]:
        vocabulary = list(vocabulary)
        vectors = self.embed([t for task in tasks for t in task.left + task.right])
        out = {}
        for task in tasks:
            sim = self.similarity(task.left, task.right, vectors)
            pairs = assign(
                task.left,
                task.right,
                sim,
                sim >= self.threshold,
                vocabulary,
                self.guard,
                self.most_pairs_first,
            )
            out[task.key] = MatchResult(pairs)
        return out


# A judge line that is nothing but a pair, once Markdown emphasis is removed: an optional bullet
# or number, ``A<i>`` and ``B<j>`` each with an optional parenthesised item text, one separator.
_EMPHASIS = re.compile(r"[*_`]+")
_PAIR_LINE = re.compile(
    r"^\s*(?:[-•]\s+|\d+[.)]\s+)?"
    r"A\s*(?P<a>\d+)(?:\s*\([^()]*\))?\s*"
    r"(?:=|==|->|→|↔|<->|:|-|–|—)\s*"
    r"B\s*(?P<b>\d+)(?:\s*\([^()]*\))?\s*[.,;]?\s*$",
    re.I,
)
_MENTIONS_INDEX = re.compile(r"\b[AB]\s*\d+\b", re.I)
_NONE_LINE = re.compile(r"^[\s*_`\-•]*none[\s*_`.!]*$", re.I)
_REASONING_TAG = re.compile(r"<(/?)(?:think|thinking|reasoning|reflection)>", re.I)
_CODE_FENCE = re.compile(r"^\s*```\w*\s*$")
_MAX_PAIR_LINE = 300  # longer lines are never a pair line (and keep the patterns linear)


def strip_reasoning(text: str) -> tuple[str, str | None]:
    """(text outside reasoning blocks, problem) where problem names a block left open.

    A closing tag without an opening one (some servers drop the opening tag) ends a block that
    began at the start of the answer.
    """
    kept, start, depth = [], 0, 0
    for tag in _REASONING_TAG.finditer(text):
        closing = tag.group(1) == "/"
        if not closing:
            if depth == 0:
                kept.append(text[start : tag.start()])
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                start = tag.end()
        else:  # stray closing tag: everything before it was reasoning
            kept, start = [], tag.end()
    if depth > 0:
        return "".join(kept), "a reasoning block is never closed"
    kept.append(text[start:])
    return "\n".join(kept), None


class LLMMatcher:
    """Judge-model matching: build requests, then read the judge's answers."""

    name = "llm"

    def __init__(self, template: str, max_new_tokens: int | None = None):
        """``max_new_tokens``: the study block's ``matcher.judge_max_new_tokens``; only
        :meth:`requests` needs it (reading answers does not)."""
        check_placeholders(template, ("{{LIST_A}}", "{{LIST_B}}"))
        self.template = template
        self.max_new_tokens = max_new_tokens

    def prompt(self, task: MatchTask) -> str:
        def numbered(prefix, items):
            return "\n".join(f"{prefix}{i + 1}. {t}" for i, t in enumerate(items))

        return self.template.replace("{{LIST_A}}", numbered("A", task.left)).replace(
            "{{LIST_B}}", numbered("B", task.right)
        )

    def requests(self, tasks: list[MatchTask], meta: dict | None = None) -> list[Request]:
        if self.max_new_tokens is None:
            raise ValueError("judge requests need max_new_tokens (matcher.judge_max_new_tokens)")
        return [
            Request(
                task.key,
                [{"role": "user", "content": self.prompt(task)}],
                {"temperature": 0.0, "max_new_tokens": self.max_new_tokens, "seed": 0},
                {"task": task.key, **(meta or {})},
            )
            for task in tasks
        ]

    @staticmethod
    def parse(
        text: str | None, n_left: int, n_right: int, finish_reason: str | None = None
    ) -> MatchResult:
        """The pairs the judge asserts, before the assignment (see :meth:`resolve`).

        Only lines that are nothing but a pair count; a repeated pair is dropped with a note. An
        answer cut at the length limit, one whose other lines name items, one naming items that do
        not exist and one with NONE beside pairs are not usable and say why. Pairs that share an
        item are kept for the assignment, with status ``contradictory``.
        """
        if text is None:
            return MatchResult(status="unparseable", reason="no answer")
        if too_long(text):
            return MatchResult(status="unparseable", reason=too_long(text))
        if finish_reason == "length":
            return MatchResult(
                status="truncated",
                reason="truncated: the judge's answer was cut at the token limit",
            )
        body, problem = strip_reasoning(text)
        if problem:
            return MatchResult(status="unparseable", reason=problem)
        found, other, said_none = [], [], False
        for number, line in enumerate(body.splitlines(), 1):
            if not line.strip() or _CODE_FENCE.match(line):
                continue
            short = len(line) <= _MAX_PAIR_LINE
            match = _PAIR_LINE.match(_EMPHASIS.sub("", line)) if short else None
            if match:
                found.append((int(match["a"]) - 1, int(match["b"]) - 1))
            elif _NONE_LINE.match(line):
                said_none = True
            elif _MENTIONS_INDEX.search(line):
                other.append(f"line {number}: {line.strip()[:80]!r}")
        if other:
            return MatchResult(
                status="unparseable",
                reason=f"text besides pairs names items ({len(other)} lines, first {other[0]})",
            )
        if said_none and found:
            return MatchResult(status="contradictory", reason="NONE and pairs in one answer")
        if not found and not said_none:
            return MatchResult(status="unparseable", reason="no 'A<i> = B<j>' line and no NONE")
        out_of_range = [p for p in found if not (0 <= p[0] < n_left and 0 <= p[1] < n_right)]
        if out_of_range:
            a, b = out_of_range[0]
            return MatchResult(
                status="unparseable",
                reason=f"{len(out_of_range)} pairs name items that do not exist (first A{a + 1}"
                f" = B{b + 1}; lists of {n_left} and {n_right})",
            )
        notes, kept = [], list(dict.fromkeys(found))
        if len(kept) < len(found):
            notes.append(f"{len(found) - len(kept)} repeated pairs dropped")
        status, reason = "ok", None
        lefts, rights = [a for a, _ in kept], [b for _, b in kept]
        if len(set(lefts)) < len(lefts) or len(set(rights)) < len(rights):
            status = "contradictory"
            notes.insert(0, "an item is paired with two others")
        if notes:
            reason = "; ".join(notes)
        return MatchResult(kept, status, reason)

    @staticmethod
    def resolve(
        parsed: MatchResult, task: MatchTask, vocabulary: Iterable[str] = ()
    ) -> MatchResult:
        """The judge's pairs through the assignment every matcher uses; dropped pairs are noted."""
        if parsed.status not in ("ok", "contradictory"):
            return parsed
        n_left, n_right = len(task.left), len(task.right)
        asserted = np.zeros((n_left, n_right), dtype=bool)
        for a, b in parsed.pairs:
            asserted[a, b] = True
        pairs = assign(task.left, task.right, asserted.astype(float), asserted, vocabulary)
        notes = [parsed.reason] if parsed.reason else []
        dropped = [p for p in parsed.pairs if p not in pairs]
        added = [p for p in pairs if p not in parsed.pairs]
        if dropped:
            shown = ", ".join(f"A{a + 1}=B{b + 1}" for a, b in dropped)
            notes.append(f"{len(dropped)} judge pairs dropped by the assignment ({shown})")
        if added:
            notes.append(f"{len(added)} identical items paired that the judge left out")
        return MatchResult(pairs, parsed.status, "; ".join(notes) or None)

    def read(
        self,
        tasks: list[MatchTask],
        responses: list[Response],
        vocabulary: Iterable[str] = (),
    ) -> dict[str, MatchResult]:
        vocabulary = list(vocabulary)
        by_id = {r.request_id: r for r in responses}
        out = {}
        for task in tasks:
            resp = by_id.get(task.key)
            # a truncated answer is the parser's to record (status truncated), not a failed call
            if resp is None or resp.error is not None:
                out[task.key] = MatchResult(status="error", reason=f"judge {verdict_problem(resp)}")
            else:
                parsed = self.parse(resp.text, len(task.left), len(task.right), resp.finish_reason)
                out[task.key] = self.resolve(parsed, task, vocabulary)
        return out


def make_matcher(method: str, settings: dict, synonyms_path=None, template_path=None):
    """The configured matcher (embedding model resolved from ``embedded:NAME`` or a folder)."""
    if method == "lexical":
        return LexicalMatcher(AliasTable.read(synonyms_path))
    if method == "embedding":
        return EmbeddingMatcher(resolve_embedding_model(settings["model"]), settings["threshold"])
    if method == "llm":
        return LLMMatcher(read_template(template_path), settings["judge_max_new_tokens"])
    raise ValueError(f"unknown matcher {method!r}; known: {METHODS}")


def resolve_embedding_model(spec: str) -> Path:
    from ...models import embedded

    if embedded.is_embedded(spec):
        return embedded.resolve(embedded.embedded_name(spec))
    return Path(spec)
