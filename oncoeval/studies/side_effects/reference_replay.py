"""The side-effects demo's replayed reference answers (stored answers, not a model).

``demo-reference-replay`` answers every request of the demo with the clinician reference list
of the profile's treatment site, one bullet per side effect, so the demo's tables have a row
near the ceiling beside the embedded model. No model is called to make it. Regenerate after a
change to the demo profiles, reference or prompts with::

    python -m oncoeval.studies.side_effects.reference_replay \
        results/side_effects/requests/lists.jsonl results/side_effects/prepared/reference.tsv \
        resources/demo/side_effects/replay/reference/side_effects/lists.jsonl
"""

from __future__ import annotations

import sys

import pandas as pd

from ...core.io import iter_jsonl, write_jsonl


def reference_answers(requests_path, reference_path) -> list[dict]:
    reference = pd.read_csv(reference_path, sep="\t")
    by_site = {site: list(rows["side_effect"]) for site, rows in reference.groupby("site")}
    rows = []
    for request in iter_jsonl(requests_path):
        items = by_site.get(request["meta"]["site"], [])
        rows.append(
            {"request_id": request["request_id"], "text": "\n".join(f"- {i}" for i in items)}
        )
    return rows


if __name__ == "__main__":
    requests_path, reference_path, out_path = sys.argv[1:4]
    write_jsonl(out_path, reference_answers(requests_path, reference_path))
