"""What the reporting checklist says of exposure (TRIPOD-LLM 6a, MI-CLEAR-LLM 6): each evaluated
model's training cutoff as the config states it, each study's dataset release date, and the
audit's verdicts read from results/{study}/tables/exposure.tsv."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..core import layout
from ..studies import contract


def cutoffs(models: list[dict], ids) -> tuple[list[str], bool]:
    """("model: cutoff" per evaluated model, whether every one states its cutoff)."""
    by_id = {m["id"]: m.get("training_cutoff") for m in models}
    lines = [f"{m}: {by_id.get(m) or 'not stated (training_cutoff unset)'}" for m in sorted(ids)]
    return lines, all(by_id.get(m) for m in ids)


def released(studies) -> dict[str, str | None]:
    """Study -> its dataset's release date (None: not documented), for studies with items to
    probe."""
    declared = {s: contract.study(s).exposure for s in studies}
    return {s: source.released for s, source in declared.items() if source is not None}


def releases(studies) -> list[str]:
    return [
        f"{s}: {date or 'release date not documented'}" for s, date in released(studies).items()
    ]


def audit(results: Path, studies) -> tuple[list[str], list[str]]:
    """(one line per study, model and probe with its verdict; the studies audited)."""
    lines, audited = [], []
    for study in studies:
        path = Path(results) / study / layout.IN_STUDY.table("exposure")
        if not path.exists():
            continue
        audited.append(study)
        for row in pd.read_csv(path, sep="\t").to_dict("records"):
            if row["n"]:
                share = (
                    f"{row['flagged']}/{row['n']} items above the controls' 95th percentile, "
                    f"95% CI {row['share_flagged_ci_low']:.2f}-{row['share_flagged_ci_high']:.2f}"
                )
            else:
                share = row["reason"]
            lines.append(f"{study} {row['model']} {row['probe']}: {row['verdict']} ({share})")
    return lines, audited


def warning(results: Path, study: str, model: str) -> str:
    """The summary's warning beside a model's headline when the audit found it exposed to the
    study's items ("" otherwise, or without an audit)."""
    path = Path(results) / study / layout.IN_STUDY.table("exposure")
    if not path.exists():
        return ""
    table = pd.read_csv(path, sep="\t")
    probes = table[(table["model"] == model) & (table["verdict"] == "exposed")]["probe"].tolist()
    return f"exposure audit: exposed ({', '.join(probes)})" if probes else ""
