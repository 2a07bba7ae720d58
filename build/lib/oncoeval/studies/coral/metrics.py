"""The study's three pair metrics: BLEU-4 (as the study computed it), ROUGE-1 F, exact-match F1.

BLEU-4 as published (the ``evaluate`` "bleu" metric with ``smooth=True``, applied per prediction):

- each predicted string is scored on its own against *all* gold strings of the same field as
  references (multi-reference clipping: an n-gram counts up to its largest count in any
  reference);
- lower-cased text, 13a tokenisation (sacrebleu's ``Tokenizer13a``);
- add-one smoothing on *every* order, unigrams included: p_n = (matches_n + 1) / (total_n + 1);
- brevity penalty against the *shortest* reference: BP = exp(1 - r/c) when c < r;
- the field's BLEU is the mean over its predictions.

Neither library reproduces this as a whole: sacrebleu's ``sentence_bleu`` (``add-k``) and
NLTK's ``SmoothingFunction().method2`` leave unigrams unsmoothed, and both take the reference
length *closest* to the prediction. So the n-gram statistics come from sacrebleu's own helpers and
the final formula from ``sacrebleu.BLEU.compute_bleu`` with the counts already add-one smoothed and
the shortest reference length (tests check this against a hand-computed example and against the
two libraries where they must differ).

ROUGE-1 F uses ``rouge-score`` with Porter stemming: for each gold string the best-matching
prediction, averaged over gold strings. Exact match compares sets of lower-cased,
whitespace-normalised strings.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

from rouge_score import rouge_scorer
from sacrebleu.metrics.bleu import BLEU
from sacrebleu.metrics.helpers import extract_all_word_ngrams
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

MAX_ORDER = 4
_TOKENIZE = Tokenizer13a()


@lru_cache(maxsize=4096)
def _ngrams(text: str):
    return extract_all_word_ngrams(_TOKENIZE(text.lower()), 1, MAX_ORDER)


def bleu4_sentence(prediction: str, references: list[str]) -> float:
    """BLEU-4 of one prediction against several references, as defined in the module doc."""
    if not references:
        raise ValueError("BLEU needs at least one reference")
    hyp, sys_len = _ngrams(prediction)
    max_ref: Counter = Counter()
    ref_lens = []
    for ref in references:
        counts, length = _ngrams(ref)
        ref_lens.append(length)
        for gram, count in counts.items():
            max_ref[gram] = max(max_ref[gram], count)
    correct = [0] * MAX_ORDER
    for gram, count in hyp.items():
        correct[len(gram) - 1] += min(count, max_ref[gram])
    total = [max(0, sys_len - n + 1) for n in range(1, MAX_ORDER + 1)]
    if sys_len == 0:
        return 0.0
    smoothed_correct = [c + 1 for c in correct]
    smoothed_total = [t + 1 for t in total]
    score = BLEU.compute_bleu(
        smoothed_correct, smoothed_total, sys_len, min(ref_lens), smooth_method="none"
    )
    return score.score / 100.0


def bleu4(predictions: list[str], references: list[str]) -> float:
    """Mean BLEU-4 over predictions, each against all references."""
    return sum(bleu4_sentence(p, references) for p in predictions) / len(predictions)


@lru_cache(maxsize=1)
def _rouge():
    return rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)


def rouge1(predictions: list[str], references: list[str]) -> float:
    """Mean over references of the best ROUGE-1 F among predictions."""
    scorer = _rouge()
    best = [
        max(scorer.score(ref, pred)["rouge1"].fmeasure for pred in predictions)
        for ref in references
    ]
    return sum(best) / len(best)


def normalise(text: str) -> str:
    return " ".join(text.lower().split())


def exact_match(predictions: list[str], references: list[str]) -> tuple[float, float, float]:
    """(precision, recall, F1) of the sets of normalised strings."""
    pred = {normalise(p) for p in predictions}
    gold = {normalise(r) for r in references}
    hits = len(pred & gold)
    precision = hits / len(pred) if pred else 0.0
    recall = hits / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1
