"""BLEU-4 as the study computed it, ROUGE-1 through rouge-score, and exact-match P/R/F1."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from sacrebleu.metrics.bleu import BLEU
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

from oncoeval.studies.coral.metrics import bleu4, bleu4_sentence, exact_match, rouge1


def test_bleu_of_the_supplement_example_is_045():
    # 13a tokens: "chest mri : december 2015" vs "mri : 12th december 2015" (5 and 5)
    # p1 = (4+1)/(5+1), p2 = (2+1)/(4+1), p3 = (0+1)/(3+1), p4 = (0+1)/(2+1); BP = 1
    hand = (5 / 6 * 3 / 5 * 1 / 4 * 1 / 3) ** 0.25
    assert bleu4_sentence("chest MRI: december 2015", ["MRI: 12th december 2015"]) == pytest.approx(
        hand
    )
    assert round(hand, 2) == 0.45  # the value the supplement reports


def test_bleu_smooths_unigrams_too_when_nothing_matches():
    # "x y" vs "a b c": p1 = 1/3, p2 = 1/2, p3 = p4 = 1/1 (no trigrams: 0+1 over 0+1); c=2 < r=3
    hand = math.exp(1 - 3 / 2) * (1 / 3 * 1 / 2 * 1 * 1) ** 0.25
    assert bleu4_sentence("x y", ["a b c"]) == pytest.approx(hand)


def test_bleu_clips_against_all_references_and_takes_the_shortest_for_brevity():
    # pred "a b c d" (4 tokens); refs "a b" (2) and "c d e f g" (5)
    # clipped matches: unigrams a,b,c,d = 4; bigrams "a b", "c d" = 2; no tri/4-grams
    # p = 5/5, 3/4, 1/3, 1/2; BP against the shortest reference (2 < 4): 1
    hand = (1 * 3 / 4 * 1 / 3 * 1 / 2) ** 0.25
    assert bleu4_sentence("a b c d", ["a b", "c d e f g"]) == pytest.approx(hand)
    # the closest reference (5 tokens) would instead give BP = exp(1 - 5/4)
    assert bleu4_sentence("a b c d", ["a b", "c d e f g"]) != pytest.approx(
        hand * math.exp(1 - 5 / 4)
    )


def test_bleu_field_mean_over_predictions():
    refs = ["mri 2015"]
    assert bleu4(["mri 2015", "x"], refs) == pytest.approx(
        (bleu4_sentence("mri 2015", refs) + bleu4_sentence("x", refs)) / 2
    )


def test_library_sentence_bleus_differ_from_the_definition_but_nltk_matches_with_add_one():
    pred, refs = "a b c d", ["a b", "c d e f g"]
    tok = Tokenizer13a()
    # sacrebleu add-k leaves unigrams unsmoothed and uses the closest reference length
    sacre = BLEU(smooth_method="add-k", smooth_value=1, effective_order=False)
    assert sacre.sentence_score(pred, refs).score / 100 != pytest.approx(bleu4_sentence(pred, refs))

    # NLTK method2 also skips unigrams; with add-one on every order and a single reference
    # (closest = shortest), NLTK gives exactly our number
    def add_one_everywhere(p_n, *args, **kwargs):
        return [Fraction(p.numerator + 1, p.denominator + 1, _normalize=False) for p in p_n]

    ref = "mri : 12th december 2015 left"
    ours = bleu4_sentence("chest mri: december 2015", [ref])
    nltk_value = sentence_bleu(
        [tok(ref).split()],
        tok("chest mri: december 2015").split(),
        smoothing_function=add_one_everywhere,
    )
    assert ours == pytest.approx(nltk_value)
    method2 = sentence_bleu(
        [tok(ref).split()],
        tok("chest mri: december 2015").split(),
        smoothing_function=SmoothingFunction().method2,
    )
    assert method2 != pytest.approx(ours)


def test_rouge1_best_prediction_per_gold_with_stemming():
    assert rouge1(["chest MRI: december 2015"], ["MRI: 12th december 2015"]) == pytest.approx(0.75)
    # gold "mri 2015" is matched perfectly, gold "ct 2016" not at all: mean 0.5
    assert rouge1(["mri 2015", "pet"], ["mri 2015", "ct 2016"]) == pytest.approx(0.5)
    # Porter stemming: "masses" and "mass" are one token
    assert rouge1(["ct masses"], ["ct mass"]) == pytest.approx(1.0)


def test_exact_match_on_normalised_sets():
    p, r, f = exact_match(["MRI  2015", "ct 2016", "pet unknown"], ["mri 2015", "us 2014"])
    assert (p, r) == (pytest.approx(1 / 3), pytest.approx(1 / 2))
    assert f == pytest.approx(2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2))
    assert exact_match(["a"], ["b"]) == (0.0, 0.0, 0.0)
