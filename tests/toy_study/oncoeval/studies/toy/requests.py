"""toy_requests: one request per question."""

from __future__ import annotations

from ...core.records import Request


def build_requests(questions: list[dict], template: str, max_new_tokens: int) -> list[Request]:
    return [
        Request(
            request_id=f"toy-{q['id']}",
            messages=[{"role": "user", "content": template.format(question=q["question"])}],
            params={"temperature": 0.0, "max_new_tokens": max_new_tokens},
            meta={"id": q["id"]},
        )
        for q in questions
    ]
