"""Semantic matching of two lists of side effects, one-to-one (§3.5, §4.2).

Every matcher answers the same question for a batch of :class:`MatchTask` (a ``left`` list, e.g.
a model's predictions, and a ``right`` list, e.g. the reference items of the profile's site): which
(left index, right index) pairs mean the same side effect, each item used at most once. Matches are
restricted to the items actually in ``left``: nothing is matched that was not predicted.

- ``lexical``: exact match after normalisation and a synonym table.
- ``embedding``: cosine similarity of sentence embeddings (all-MiniLM-L6-v2 by default) at or
  above a threshold; the one-to-one assignment with the most pairs, then the highest total
  similarity, from ``scipy.optimize.linear_sum_assignment``.
- ``llm``: a judge model, called through the ``generate`` rule, lists matched pairs in a fixed
  format (``A2 = B5``, or ``NONE``). It is two steps around ``generate``: :meth:`LLMMatcher.requests`
  and :meth:`LLMMatcher.read`; an unparseable answer becomes a result with status
  ``unparseable``.
"""

from __future__ import annotations

import logging
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from scipy.optimize import linear_sum_assignment

from ...records import Request, Response, verdict_problem
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
    status: str = "ok"  # ok | unparseable | error
    reason: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def one_to_one(score: np.ndarray, admissible: np.ndarray) -> list[tuple[int, int]]:
    """Pairs of a one-to-one assignment among admissible cells: most pairs, then highest score.

    Weights ``big + score`` on admissible cells (``big`` exceeds any attainable score sum of a
    smaller matching) make the maximum-weight assignment a maximum-cardinality one first.
    """
    if score.size == 0 or not admissible.any():
        return []
    big = float(min(score.shape) + 1)
    weight = np.where(admissible, big + np.clip(score, 0.0, 1.0), 0.0)
    rows, cols = linear_sum_assignment(weight, maximize=True)
    return sorted((int(i), int(j)) for i, j in zip(rows, cols, strict=True) if admissible[i, j])


class LexicalMatcher:
    name = "lexical"

    def __init__(self, synonyms: AliasTable | None = None):
        self.synonyms = synonyms or AliasTable()

    def canonical(self, text: str) -> str:
        found = self.synonyms.lookup(text)
        return norm_key(found if found is not None else text)

    def run(self, tasks: list[MatchTask]) -> dict[str, MatchResult]:
        out = {}
        for task in tasks:
            left = np.array([self.canonical(t) for t in task.left], dtype=object)
            right = np.array([self.canonical(t) for t in task.right], dtype=object)
            same = left[:, None] == right[None, :] if len(left) and len(right) else np.zeros((0, 0))
            same = np.asarray(same, dtype=bool)
            out[task.key] = MatchResult(one_to_one(same.astype(float), same))
        return out


class EmbeddingMatcher:
    """Loads the sentence-embedding model once; every task of a job shares it."""

    name = "embedding"

    def __init__(self, model_path: str | Path, threshold: float, batch_size: int = 64):
        from sentence_transformers import SentenceTransformer  # heavy: only when used

        self.threshold = float(threshold)
        self.batch_size = batch_size
        self.model = SentenceTransformer(str(model_path), device="cpu")

    def embed(self, texts: list[str]) -> dict[str, np.ndarray]:
        unique = sorted(set(texts))
        if not unique:
            return {}
        vectors = self.model.encode(
            unique, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True
        )
        return dict(zip(unique, vectors, strict=True))

    def similarity(self, left: list[str], right: list[str], vectors=None) -> np.ndarray:
        vectors = vectors or self.embed(left + right)
        if not left or not right:
            return np.zeros((len(left), len(right)))
        a = np.stack([vectors[t] for t in left])
        b = np.stack([vectors[t] for t in right])
        return a @ b.T

    def run(self, tasks: list[MatchTask]) -> dict[str, MatchResult]:
        vectors = self.embed([t for task in tasks for t in task.left + task.right])
        out = {}
        for task in tasks:
            sim = self.similarity(task.left, task.right, vectors)
            out[task.key] = MatchResult(one_to_one(sim, sim >= self.threshold))
        return out


_PAIR = re.compile(r"\bA\s*(\d+)\s*(?:=|==|->|→|:|-|–|,|matches|\bwith\b)\s*B\s*(\d+)\b", re.I)
_NONE = re.compile(r"^\W*none\W*$", re.I | re.M)


class LLMMatcher:
    """Judge-model matching: build requests, then read the judge's answers."""

    name = "llm"

    def __init__(self, template: str, max_new_tokens: int = 400):
        self.template = template
        self.max_new_tokens = int(max_new_tokens)

    def prompt(self, task: MatchTask) -> str:
        def numbered(prefix, items):
            return "\n".join(f"{prefix}{i + 1}. {t}" for i, t in enumerate(items))

        return self.template.replace("{{LIST_A}}", numbered("A", task.left)).replace(
            "{{LIST_B}}", numbered("B", task.right)
        )

    def requests(self, tasks: list[MatchTask], meta: dict | None = None) -> list[Request]:
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
    def parse(text: str | None, n_left: int, n_right: int) -> MatchResult:
        """Pairs from a judge answer; out-of-range and repeated indices are dropped and noted."""
        if text is None:
            return MatchResult(status="unparseable", reason="no answer")
        found = [(int(a) - 1, int(b) - 1) for a, b in _PAIR.findall(text)]
        if not found:
            if _NONE.search(text):
                return MatchResult()
            return MatchResult(status="unparseable", reason="no 'A<i> = B<j>' pair and no NONE")
        pairs, used_a, used_b, dropped = [], set(), set(), 0
        for a, b in found:
            if not (0 <= a < n_left and 0 <= b < n_right) or a in used_a or b in used_b:
                dropped += 1
                continue
            used_a.add(a)
            used_b.add(b)
            pairs.append((a, b))
        reason = f"{dropped} out-of-range or repeated pairs dropped" if dropped else None
        return MatchResult(sorted(pairs), "ok", reason)

    def read(self, tasks: list[MatchTask], responses: list[Response]) -> dict[str, MatchResult]:
        by_id = {r.request_id: r for r in responses}
        out = {}
        for task in tasks:
            resp = by_id.get(task.key)
            problem = verdict_problem(resp)
            if problem is not None:
                out[task.key] = MatchResult(status="error", reason=f"judge {problem}")
            else:
                out[task.key] = self.parse(resp.text, len(task.left), len(task.right))
        return out


def make_matcher(method: str, settings: dict, synonyms_path=None, template_path=None):
    """The configured matcher (embedding model resolved from ``embedded:NAME`` or a folder)."""
    if method == "lexical":
        return LexicalMatcher(AliasTable.read(synonyms_path))
    if method == "embedding":
        return EmbeddingMatcher(resolve_embedding_model(settings["model"]), settings["threshold"])
    if method == "llm":
        return LLMMatcher(
            Path(template_path).read_text(encoding="utf-8"),
            settings.get("judge_max_new_tokens", 400),
        )
    raise ValueError(f"unknown matcher {method!r}; known: {METHODS}")


def resolve_embedding_model(spec: str) -> Path:
    from ... import embedded

    if embedded.is_embedded(spec):
        return embedded.resolve(embedded.embedded_name(spec))
    return Path(spec)
