"""Requests stage: items -> one request per note, section and subtype (request set ``extraction``)."""

from __future__ import annotations

from pathlib import Path

from ...core.inputs import check_placeholders, read_template
from ...core.records import Request
from .tasks import SUBTYPES

TASK_PLACEHOLDER = "{task-specific-prompt}"


def load_prompts(prompt_dir: str | Path, subtypes) -> tuple[str, str, dict[str, str]]:
    prompt_dir = Path(prompt_dir)
    system = read_template(prompt_dir / "system.txt", strip=True)
    template = read_template(prompt_dir / "user_template.txt", strip=True)
    check_placeholders(template, (TASK_PLACEHOLDER,))
    tasks = {s: read_template(prompt_dir / "tasks" / f"{s}.txt", strip=True) for s in subtypes}
    return system, template, tasks


def build_requests(items, subtypes, prompt_dir, params: dict) -> list[Request]:
    """One request per note, section and subtype: section text first, then the prompt."""
    unknown = [s for s in subtypes if s not in SUBTYPES]
    if unknown:
        raise ValueError(f"unknown subtypes {unknown}; known: {list(SUBTYPES)}")
    system, template, tasks = load_prompts(prompt_dir, subtypes)
    requests = []
    for item in items:
        for section, sec in item["sections"].items():
            for subtype in subtypes:
                user = sec["text"] + "\n\n" + template.replace(TASK_PLACEHOLDER, tasks[subtype])
                requests.append(
                    Request(
                        request_id=f"{item['doc_id']}|{section}|{subtype}",
                        messages=[
                            {"role": "system", "content": system},
                            {"role": "user", "content": user},
                        ],
                        params=dict(params),
                        meta={"doc_id": item["doc_id"], "section": section, "subtype": subtype},
                    )
                )
    return requests
