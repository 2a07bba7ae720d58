"""Scores of one probe answer against its truth.

- completion: ROUGE-L F1 of the answer against the true remainder (rouge-score, Lin 2004; the
  score), and the longest run of tokens the two share, as a share of the remainder's tokens.
- slot: 1 when the answer, normalised, is the masked word, else 0 (Deng et al. 2023's exact
  match).
- likelihood: Min-K% Prob (Shi et al. 2023), the mean log-probability of the text's ``MIN_K``
  least likely tokens (the answer is the backend's list of token log-probabilities).
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import cache

_TOKEN = re.compile(r"[a-z0-9]+")
# Shi et al. 2023's k: the lowest 20% of the tokens.
MIN_K = 0.2


@cache
def _rouge():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"])


def tokens(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens (rouge-score's own tokenisation, without stemming)."""
    return _TOKEN.findall(text.lower())


def rouge_l(answer: str, truth: str) -> float:
    """ROUGE-L F1 of ``answer`` against ``truth`` (0 when either has no token)."""
    return float(_rouge().score(truth, answer)["rougeL"].fmeasure)


def longest_run(answer: str, truth: str) -> float:
    """The longest run of consecutive tokens of ``truth`` that ``answer`` repeats, as a share
    of ``truth``'s tokens (0 for an empty truth)."""
    a, t = tokens(answer), tokens(truth)
    if not t:
        return 0.0
    match = SequenceMatcher(None, a, t, autojunk=False).find_longest_match(0, len(a), 0, len(t))
    return match.size / len(t)


def normalise_word(text: str) -> str:
    """An answer's first line, lower-cased, without surrounding quotes, spaces and punctuation."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first.strip().strip("\"'`*.,;:!?()[]{} ").lower()


def slot_match(answer: str, truth: str) -> float:
    return float(normalise_word(answer) == truth.lower())


def min_k_prob(logprobs, k: float = MIN_K) -> float:
    """Min-K% Prob: the mean of the lowest ``k`` share of the token log-probabilities (at least
    one token); NaN for no token."""
    values = sorted(float(v) for v in logprobs)
    if not values:
        return float("nan")
    n = max(1, int(len(values) * k))
    return sum(values[:n]) / n


def score(probe: str, answer, truth: str) -> dict:
    """The probe's score of one answer: ``score`` and, for completion, ``longest_run``. For the
    likelihood probe ``answer`` is the text's token log-probabilities."""
    if probe == "likelihood":
        return {"score": min_k_prob(answer)}
    if probe == "completion":
        return {"score": rouge_l(answer, truth), "longest_run": longest_run(answer, truth)}
    if probe == "slot":
        return {"score": slot_match(answer, truth)}
    raise ValueError(f"unknown exposure probe {probe!r}")
