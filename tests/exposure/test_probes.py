"""Probe requests built from real items: verbatim opening, correct remainder, masked word,
controls that differ from the item."""

import json
import random

import pytest

from oncoeval.core.source import source_file
from oncoeval.exposure.probes import (
    CONTROL_SUFFIX,
    MASK,
    ProbeSettings,
    build_probes,
    mask_slot,
    perturb,
    read_template,
    select_items,
    split_opening,
)

SETTINGS = ProbeSettings("Cancer-Myth", "question", seed=0, n_items=None, max_new_tokens=64)


def demo_items():
    rows = json.loads(open(source_file("resources/demo/cancer_myth/questions.json")).read())
    return [{"item_id": str(i), "text": r["example_question"]} for i, r in enumerate(rows)]


def test_opening_is_the_first_half_of_the_words_verbatim():
    text = "My dad has early  prostate cancer,\nGleason 6."
    # 8 words: the first 4 verbatim (double space kept), the remainder from the 5th word on
    assert split_opening(text) == ("My dad has early", "prostate cancer,\nGleason 6.")
    assert split_opening("too short text") is None


def test_mask_hides_a_content_word_never_a_function_word():
    masked, word = mask_slot("Which hospital has the shortest list?", random.Random(0))
    assert word in {"Which", "hospital", "shortest", "list"} - {"Which"}
    assert masked.replace(MASK, word) == "Which hospital has the shortest list?"
    assert mask_slot("It is on the way.", random.Random(0)) is None


def test_perturb_swaps_every_other_content_word_and_every_number():
    out = perturb("Gleason score of 6 needs surgery", random.Random(1), ["tumour", "scan"])
    words = out.split()
    assert words[2:4] != ["of", "6"] and words[2] == "of" and int(words[3]) in range(7, 16)
    content = [w for w in words if w not in {"of", words[3]}]
    # four content words, two of them swapped for the pool's words
    assert sum(w.lower() in {"tumour", "scan"} for w in content) == 2


def test_completion_requests_of_demo_items_carry_opening_and_remainder():
    items = demo_items()
    template = read_template(source_file("config/prompts/exposure"), "completion")
    requests, skipped = build_probes(items, "completion", template, SETTINGS)
    assert skipped == [] and len(requests) == 2 * len(items)
    first, control = requests[0], requests[1]
    text = items[0]["text"]
    opening, remainder = split_opening(text)
    assert first.request_id == "0" and control.request_id == "0" + CONTROL_SUFFIX
    assert opening in first.messages[0]["content"] and "Cancer-Myth" in first.messages[0]["content"]
    assert remainder not in first.messages[0]["content"]
    assert opening + " " + first.meta["truth"] == text
    assert first.meta == {
        "item_id": "0",
        "probe": "completion",
        "control": False,
        "truth": remainder,
    }
    # the control is another text: its opening is not the item's
    assert opening not in control.messages[0]["content"] and control.meta["control"]


def test_slot_requests_mask_one_word_of_the_item():
    items = demo_items()[:3]
    template = read_template(source_file("config/prompts/exposure"), "slot")
    requests, _ = build_probes(items, "slot", template, SETTINGS)
    for req in requests[::2]:
        text = next(it["text"] for it in items if it["item_id"] == req.request_id)
        shown = req.messages[0]["content"].split("\n\n")[-1]
        assert shown.replace(MASK, req.meta["truth"]) == text


def test_select_items_is_seeded_and_keeps_file_order():
    items = [{"item_id": str(i), "text": "t"} for i in range(10)]
    a, b = select_items(items, 4, 3), select_items(items, 4, 3)
    assert a == b and len(a) == 4
    assert [int(it["item_id"]) for it in a] == sorted(int(it["item_id"]) for it in a)
    assert select_items(items, None, 3) == items


def test_unknown_probe_is_refused():
    with pytest.raises(ValueError, match="unknown exposure probe"):
        build_probes(demo_items()[:1], "guess", "{opening}", SETTINGS)
