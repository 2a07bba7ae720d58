"""The CORAL demo's replayed reference answers (stored answers, not a model).

``coral-reference-replay`` answers every extraction request of the demo notes with the gold
tuples of that note, section and subtype, written as the namedtuple lines the prompts ask for,
so the demo's tables have a row at the ceiling beside the embedded model. No model is called to
make it. It covers all 14 subtypes (request ids do not depend on which are asked). Regenerate
after a change to the demo notes or annotations, from a run that asks every subtype, with::

    python -m oncoeval.studies.coral.reference_replay \\
        results/coral/requests/extraction.jsonl results/coral/gold/gold.tsv \\
        resources/demo/coral/replay/reference/coral/extraction.jsonl
"""

from __future__ import annotations

import sys

import pandas as pd

from ...core.io import iter_jsonl, write_jsonl
from .tasks import SUBTYPES


def gold_answer(rows: pd.DataFrame, subtype: str) -> str:
    """The namedtuple lines a perfect model writes for one note section and subtype."""
    st = SUBTYPES[subtype]
    lines = []
    for _, tup in rows.groupby("tuple_index", sort=True):
        args = [f"{st.primary}={tup['primary'].iloc[0]!r}"]
        for name in st.fields:
            values = tup.loc[tup["field"] == name, "field_value"].tolist()
            args.append(f"{name}={{{', '.join(repr(v) for v in values)}}}")
        lines.append(f"{st.tuple_name}({', '.join(args)})")
    return "\n".join(lines)


def reference_answers(requests_path, gold_path) -> list[dict]:
    gold = pd.read_csv(gold_path, sep="\t", dtype=str, keep_default_na=False)
    if "view" in gold.columns:  # the answers of the published derivation
        gold = gold[gold["view"] == "published"]
    groups = {key: rows for key, rows in gold.groupby(["doc_id", "section", "subtype"])}
    out = []
    for request in iter_jsonl(requests_path):
        m = request["meta"]
        rows = groups.get((m["doc_id"], m["section"], m["subtype"]), gold.iloc[0:0])
        out.append({"request_id": request["request_id"], "text": gold_answer(rows, m["subtype"])})
    return out


if __name__ == "__main__":
    requests_path, gold_path, out_path = sys.argv[1:4]
    write_jsonl(out_path, reference_answers(requests_path, gold_path))
