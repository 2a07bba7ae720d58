"""toy_prepare: the questions file, checked record by record."""

from __future__ import annotations

from ...core.errors import InputError
from ...core.io import iter_jsonl_lines


def load_questions(path, limit: int | None = None) -> list[dict]:
    """Questions in file order (the first ``limit`` of them); a record without an id, a question
    or an integer answer is an error naming the file and the line."""
    questions = []
    for lineno, row in iter_jsonl_lines(path):
        for key in ("id", "question", "answer"):
            if key not in row:
                raise InputError(path, f"line {lineno}", f"no {key!r}")
        if not isinstance(row["answer"], int):
            raise InputError(path, f"line {lineno}", f"answer {row['answer']!r} is no integer")
        questions.append({k: row[k] for k in ("id", "question", "answer")})
    return questions[:limit] if limit else questions
