"""Output normalisation: bullets of any style, non-list lines counted, duplicates dropped."""

from oncoeval.studies.side_effects.parse import parse_list


def test_bullets_of_every_style_become_one_clean_list():
    text = (
        "Here are the side effects:\n"
        "• Radiation dermatitis\n"
        "- Fatigue.\n"
        "* **Breast swelling**\n"
        "1. Rib fracture\n"
        "2) lymphedema\n"
        "–  Skin   ulceration \n"
        "\n"
        "- fatigue\n"
        "Long-term:\n"
        "- Long-term effects:\n"
        "-\n"
        "---\n"
        "I hope this helps."
    )
    parsed = parse_list(text)
    assert parsed.items == [
        "radiation dermatitis",
        "fatigue",
        "breast swelling",
        "rib fracture",
        "lymphedema",
        "skin ulceration",
    ]
    assert parsed.n_duplicates == 1
    # preamble, 'Long-term:', '- Long-term effects:', the empty bullet, the rule, the closing line
    assert parsed.n_non_list_lines == 6
    assert parsed.status == "ok"


def test_response_without_list_items_is_empty_not_an_error():
    parsed = parse_list("I cannot provide medical advice.")
    assert (parsed.items, parsed.status, parsed.n_non_list_lines) == ([], "empty", 1)


def test_failed_call_is_recorded_with_its_reason():
    parsed = parse_list(None, error="timeout after 3 retries")
    assert parsed.status == "error" and parsed.reason == "timeout after 3 retries"


def test_answer_without_markers_gives_one_item_per_line():
    # as the grounded prompts show the vocabulary: one side effect per line, no bullets
    text = (
        "Here are the relevant side effects:\n"
        "Short-term effects\n"
        "Fatigue\n"
        "Radiation dermatitis\n"
        "Breast swelling\n"
        "\n"
        "Please consult your radiation oncologist."
    )
    parsed = parse_list(text)
    assert parsed.items == ["fatigue", "radiation dermatitis", "breast swelling"]
    assert parsed.n_non_list_lines == 3  # the preamble, the heading and the closing sentence


def test_inline_bullets_give_their_items():
    parsed = parse_list("Short-term:\n• Fatigue • Nausea • Skin blistering or peeling\n")
    assert parsed.items == ["fatigue", "nausea", "skin blistering or peeling"]
    assert parsed.n_non_list_lines == 1


def test_trailing_annotations_are_not_part_of_the_item():
    text = (
        "- Fatigue (common)\n"
        "- Nausea - onset: acute\n"
        "- Rib fracture: rare\n"
        "- Pericarditis – extremely rare\n"
        "- Skin hyperpigmentation/changes in skin color\n"
        "- Breast pain (short term) (common)\n"
        "- Long-term effects:\n"
    )
    parsed = parse_list(text)
    assert parsed.items == [
        "fatigue",
        "nausea",
        "rib fracture",
        "pericarditis",
        "skin hyperpigmentation/changes in skin color",
        "breast pain",
    ]
    assert parsed.n_non_list_lines == 1  # the heading
