"""Requests: every profile, in both variants, under every prompting regime (Appendix A)."""

from __future__ import annotations

import os

from ...core.inputs import check_placeholders, read_template
from ...core.records import Request

REGIMES = ("ff", "ff_lsc", "grounded", "grounded_lsc")
VARIANTS = ("base", "specified")


def render(template: str, profile: str, vocabulary: list[str], list_size: tuple[int, int]) -> str:
    """Fill a template's ``{{PATIENT_PROFILE}}``, ``{{SIDE_EFFECTS}}`` and ``{{LIST_SIZE}}``."""
    text = template.replace("{{LIST_SIZE}}", f"{list_size[0]}-{list_size[1]}")
    text = text.replace("{{SIDE_EFFECTS}}", "\n".join(vocabulary))
    # The profile goes in last, verbatim, so that braces inside it are never read as placeholders.
    return text.replace("{{PATIENT_PROFILE}}", profile)


def placeholders(regime: str) -> tuple[str, ...]:
    """The placeholders a regime's template must hold: grounded lists the vocabulary, lsc the size."""
    names = ["{{PATIENT_PROFILE}}"]
    if regime.startswith("grounded"):
        names.append("{{SIDE_EFFECTS}}")
    if regime.endswith("_lsc"):
        names.append("{{LIST_SIZE}}")
    return tuple(names)


def request_id(profile_id: str, variant: str, regime: str) -> str:
    return f"{profile_id}|{variant}|{regime}"


def build_requests(
    profiles: list[dict],
    templates: dict[str, str | os.PathLike],
    vocabulary: list[str],
    list_size: tuple[int, int],
    max_new_tokens: int,
    seed: int = 0,
) -> list[Request]:
    """One greedy request per profile x variant x regime; ``templates`` maps regime -> file."""
    # A template file ends with a newline; the prompt ends with the profile (Appendix A).
    texts = {regime: read_template(path) for regime, path in templates.items()}
    for regime, template in texts.items():
        check_placeholders(template, placeholders(regime))
    texts = {regime: template.rstrip("\n") for regime, template in texts.items()}
    requests = []
    for prof in profiles:
        for variant in VARIANTS:
            for regime, template in texts.items():
                prompt = render(template, prof[variant], vocabulary, list_size)
                requests.append(
                    Request(
                        request_id(prof["profile_id"], variant, regime),
                        [{"role": "user", "content": prompt}],
                        {"temperature": 0.0, "max_new_tokens": int(max_new_tokens), "seed": seed},
                        {
                            "profile_id": prof["profile_id"],
                            "variant": variant,
                            "regime": regime,
                            "site": prof["site"],
                        },
                    )
                )
    return requests
