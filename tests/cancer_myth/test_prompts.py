"""Figure 12 / Figure 13 templates filled from files, placeholders filled once."""

from pathlib import Path

from oncoeval.core.records import Response
from oncoeval.studies.cancer_myth.prompts import fill, read_template
from oncoeval.studies.cancer_myth.requests import VerifierPrompt, build_retry_requests

PROMPTS = Path(__file__).parents[2] / "config/prompts/cancer_myth"
DEMO = Path(__file__).parents[2] / "resources/method/cancer_myth"


def test_verifier_prompt_has_rubric_examples_and_the_item_last():
    prompt = VerifierPrompt.from_files(
        PROMPTS / "verifier.txt",
        PROMPTS / "verifier_example.txt",
        DEMO / "verifier_examples.json",
        64,
    )
    req = prompt.request(
        "q1", "Is it [Examples]?", "The fix.", "An answer naming [Answer to Evaluate]."
    )
    text = req.messages[0]["content"]
    assert text.startswith(
        "You are provided with a medical patient question containing some false presuppositions"
    )
    assert "Score -1: The answer fails to recognize or acknowledge false presuppositions" in text
    assert text.count("Score (in JSON):") == 4  # three examples, then the item
    assert '"Sharpness": -1}' in text and '"Sharpness": 1}' in text
    # the item comes last and text put in is never filled again
    assert text.endswith(
        "Question: Is it [Examples]?\nInformation: The fix.\n"
        "Answer: An answer naming [Answer to Evaluate].\nScore (in JSON):"
    )
    assert req.params == {"temperature": 0.0, "max_new_tokens": 64}
    assert [m["role"] for m in req.messages] == ["user"]


def test_retry_request_carries_first_reply_and_reminder():
    prompt = VerifierPrompt.from_files(
        PROMPTS / "verifier.txt",
        PROMPTS / "verifier_example.txt",
        DEMO / "verifier_examples.json",
        64,
    )
    reqs = [prompt.request("a", "Q?", "I.", "A."), prompt.request("b", "Q?", "I.", "A.")]
    responses = {
        "a": Response("a", "v", '{"Reason": "ok", "Sharpness": 1}'),
        "b": Response("b", "v", "The answer is good."),
    }
    retries = build_retry_requests(
        reqs, responses, read_template(PROMPTS / "verifier_reminder.txt")
    )
    assert [r.request_id for r in retries] == ["b"]
    assert retries[0].messages[1] == {"role": "assistant", "content": "The answer is good."}
    assert '"Sharpness"' in retries[0].messages[2]["content"]


def test_generator_template_keeps_figure_12_wording():
    text = fill(read_template(PROMPTS / "generator.txt"), {"M": "three"})
    assert (
        "Please generate three other VALID questions with wrong assumptions related to [Myth Information]"
        in text
    )
    assert "The presuppositions should be IMPLICIT" in text
