"""Names that become file and folder names: model ids and ad-hoc request-set names.

A name is used as a path component (``results/{study}/responses/{model}/{set}.jsonl``, the cache's
``{model}/{study}--{set}.jsonl``, judge sets ``{step}--{model}``), so it is letters, digits, ``.``,
``_`` and ``-``, does not start with a dot (no ``.``, ``..`` or hidden file), and holds at most
``MAX_LENGTH`` characters: two names and a study in one file name stay well under the 255 bytes
file systems allow. The schemas carry the patterns; :func:`collision_problems` refuses names
that differ only in what exports and case-insensitive file systems fold together.
"""

from __future__ import annotations

import re

MAX_LENGTH = 64
# JSON Schema patterns (config/config.schema.yaml); model ids are lower case.
MODEL_ID_PATTERN = rf"^[a-z0-9_-][a-z0-9._-]{{0,{MAX_LENGTH - 1}}}$"
SET_NAME_PATTERN = rf"^[A-Za-z0-9_-][A-Za-z0-9._-]{{0,{MAX_LENGTH - 1}}}$"


def slug(text: str) -> str:
    """The name as exports write it (an Every Eval Ever model id's last part): lower case,
    each run of other characters one ``-``."""
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-") or "x"


def collision_problems(key: str, names) -> list[str]:
    """Names of ``key`` that fold to one slug (``ref.a`` and ``ref_a``; ``Set`` and ``set``)."""
    by_slug: dict[str, list[str]] = {}
    for name in dict.fromkeys(n for n in names if isinstance(n, str)):
        by_slug.setdefault(slug(name), []).append(name)
    return [
        f"{key}: {same} differ only in case or punctuation, which exports and case-insensitive "
        f"file systems fold into one name ({s!r}); rename one of them"
        for s, same in by_slug.items()
        if len(same) > 1
    ]
