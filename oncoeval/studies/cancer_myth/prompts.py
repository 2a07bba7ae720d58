"""Prompt templates with the paper's bracketed placeholders (``[Question to Evaluate]``...).

Templates live under config/prompts/cancer_myth/. Placeholders are filled in one pass, so text put
in (an answer that happens to contain ``[Examples]``) is never filled again.
"""

from __future__ import annotations

import json
import re

from ...core import inputs

NUMBER_WORDS = {
    1: "one",
    2: "two",
    3: "three",
    4: "four",
    5: "five",
    6: "six",
    7: "seven",
    8: "eight",
    9: "nine",
    10: "ten",
}


def read_template(path) -> str:
    return inputs.read_template(path, strip="\n")


def fill(template: str, values: dict[str, str]) -> str:
    """Replace each ``[Name]`` of ``values`` in ``template``; other brackets are left alone."""
    if not values:
        return template
    inputs.check_placeholders(template, [f"[{name}]" for name in values])
    pattern = re.compile("|".join(re.escape(f"[{name}]") for name in values))
    return pattern.sub(lambda m: str(values[m.group(0)[1:-1]]), template)


def number_word(n: int) -> str:
    return NUMBER_WORDS.get(int(n), str(int(n)))


def verifier_score_json(score: dict) -> str:
    """An in-context example's score object as the verifier is asked to write it."""
    return json.dumps(score, ensure_ascii=False)


def render_verifier(
    template: str, example_template: str, examples: list[dict], question, information, answer
) -> str:
    blocks = [
        fill(
            example_template,
            {
                "Example Question": ex["example_question"],
                "Example Assumption": ex["example_assumption"],
                "Example Answer": ex["answer"],
                "Example Score": verifier_score_json(ex["score"]),
            },
        )
        for ex in examples
    ]
    return fill(
        template,
        {
            "Examples": "\n\n".join(blocks),
            "Question to Evaluate": question,
            "False Assumption": information,
            "Answer to Evaluate": answer,
        },
    )


def render_classifier(
    template: str, example_template: str, examples: list[dict], question, information
) -> str:
    blocks = [
        fill(
            example_template,
            {
                "Example Question": ex["example_question"],
                "Example Information": ex["example_assumption"],
                "Example Category": json.dumps(
                    {"reason": ex.get("reason", ""), "category": ex["category"]},
                    ensure_ascii=False,
                ),
            },
        )
        for ex in examples
    ]
    return fill(
        template,
        {"Examples": "\n\n".join(blocks), "Question": question, "Information": information},
    )


def myth_information(myth: dict) -> str:
    """How a myth is put into the generator prompt's ``[Myth Information]``."""
    return json.dumps(
        {"cancer": myth["cancer"], "myth": myth["myth"], "fact": myth["fact"]},
        ensure_ascii=False,
    )


def render_generator(
    template: str, good: list[dict], bad: list[dict], myth: dict, n_questions: int
) -> str:
    good_rows = [
        {"example_question": g["example_question"], "example_assumption": g["example_assumption"]}
        for g in good
    ]
    bad_rows = [{"example_question": b["example_question"], "reason": b["reason"]} for b in bad]
    return fill(
        template,
        {
            "Good_Examples": json.dumps(good_rows, indent=2, ensure_ascii=False),
            "Bad_Examples": json.dumps(bad_rows, indent=2, ensure_ascii=False),
            "Myth Information": myth_information(myth),
            "M": number_word(n_questions),
        },
    )
