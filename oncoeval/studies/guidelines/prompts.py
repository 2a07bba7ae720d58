"""Request sets of the study: path-prediction rollouts and the synthetic-supervision steps.

Templates are files (config/prompts/guidelines/); placeholders are ``{name}`` for the names a
builder fills (``note``, ``guideline``, ``guideline_json``, ``path``, ``record``, ``example``,
``path_a``, ``path_b``); every other brace is left alone, so templates may show JSON examples
verbatim. ``{guideline}`` is the compact one-line-per-node form (short prompts for small models);
``{guideline_json}`` the whole tree as JSON, as the study's own prompts give it.
"""

from __future__ import annotations

import json

from ...core import inputs
from ...core.inputs import check_placeholders
from ...core.records import Request
from .tree import GuidelineTree, serialise_compact

#: The two renderings of the tree (see :func:`guideline_fields`).
GUIDELINE_FIELDS = ("guideline", "guideline_json")


def fill(template: str, **fields: str) -> str:
    # the guideline (in either rendering) is context a template may leave out; the other fields
    # vary per request
    check_placeholders(
        template, ["{" + name + "}" for name in fields if name not in GUIDELINE_FIELDS]
    )
    for name, value in fields.items():
        template = template.replace("{" + name + "}", value)
    return template


def guideline_fields(tree: GuidelineTree) -> dict[str, str]:
    """Both renderings of the tree for ``fill`` (a template uses one or neither)."""
    return {
        "guideline": serialise_compact(tree),
        "guideline_json": json.dumps(tree.to_dict(), ensure_ascii=False, indent=1),
    }


def read_template(path) -> str:
    return inputs.read_template(path)


def sampling_params(temperature: float, max_new_tokens: int, seed: int, top_p=None) -> dict:
    params = {"temperature": float(temperature), "max_new_tokens": int(max_new_tokens)}
    if float(temperature) > 0:
        params["seed"] = int(seed)
        if top_p is not None:
            params["top_p"] = float(top_p)
    return params


def rollout_requests(
    notes: list[dict],
    tree: GuidelineTree,
    template: str,
    k: int,
    temperature: float,
    max_new_tokens: int,
    seed: int,
    top_p=None,
) -> list[Request]:
    """k seeded requests per note: ``{patient_id}#r{i}`` with seed ``seed + i``.

    With temperature 0 the k requests are identical (greedy) and the cache answers them once.
    """
    guideline = guideline_fields(tree)
    out = []
    for note in notes:
        content = fill(template, note=note["note"].strip(), **guideline)
        for i in range(k):
            out.append(
                Request(
                    request_id=f"{note['patient_id']}#r{i}",
                    messages=[{"role": "user", "content": content}],
                    params=sampling_params(temperature, max_new_tokens, seed + i, top_p),
                    meta={
                        "patient_id": note["patient_id"],
                        "note_set": note["note_set"],
                        "rollout": i,
                    },
                )
            )
    return out


def describe_path(tree: GuidelineTree, path) -> str:
    """A target path with each node's text, for the generator."""
    lines = []
    for nid in path:
        node = tree.nodes[nid]
        line = f"{nid}: {node.text}"
        if node.recommendation:
            line += f" => TREAT: {node.recommendation}"
        lines.append(line)
    return "\n".join(lines)
