"""The audit through Snakemake on the demo's Cancer-Myth questions, with replay models: one
that answers the probes with the items' true rest (memorised), one with another item's (unseen);
for the likelihood probe they replay token log-probabilities (the memorised model's items more
likely than any control). The probes go through the `generate` rule; the item tables and the
verdicts come out."""

import json

import pandas as pd
import pytest

from tests.conftest import REPO, other_studies_off, run_snakemake, write_config

R = "results/cancer_myth"
pytestmark = pytest.mark.slow
PROBES = ("completion", "slot", "likelihood")


def _config(wd):
    for m in ("memorised", "unseen", "judge"):
        (wd / m).mkdir()
    models = [
        {"id": m, "backend": "replay", "path": str(wd / m)}
        for m in ("memorised", "unseen", "judge")
    ]
    return {
        "models": models,
        "evaluate": ["memorised", "unseen"],
        "studies": {
            "cancer_myth": {
                "enabled": True,
                "evaluate": ["memorised", "unseen"],
                "verifier_for": None,
                "judges": {"verifier": "judge", "classifier": None},
                "questions": str(REPO / "resources/demo/cancer_myth/questions.json"),
                "human_scores": None,
                "exposure": {"enabled": True, "probes": list(PROBES)},
            },
            **other_studies_off("cancer_myth"),
        },
    }


def _replays(wd):
    """memorised: each item's truth, each control another control's; unseen: every request
    answered with another request's truth of its kind (a plausible text, not its own)."""
    for probe in PROBES:
        rows = [json.loads(x) for x in (wd / R / f"requests/exposure_{probe}.jsonl").open()]
        if probe == "likelihood":
            _likelihood_replays(wd, rows)
            continue
        by_kind = {c: [r for r in rows if r["meta"]["control"] is c] for c in (False, True)}
        answers = {"memorised": [], "unseen": []}
        for control, group in by_kind.items():
            for i, r in enumerate(group):
                other = group[(i + 1) % len(group)]["meta"]["truth"]
                own = r["meta"]["truth"]
                answers["memorised"].append((r["request_id"], other if control else own))
                answers["unseen"].append((r["request_id"], other))
        for model, pairs in answers.items():
            path = wd / model / "cancer_myth" / f"exposure_{probe}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(
                "".join(json.dumps({"request_id": i, "text": t}) + "\n" for i, t in pairs)
            )


def _likelihood_replays(wd, rows):
    """Token log-probabilities: every text's lowest 20% at -3 - i/100 (i its line), except the
    memorised model's items, at -0.5."""
    for model in ("memorised", "unseen"):
        lines = []
        for i, r in enumerate(rows):
            own = model == "memorised" and not r["meta"]["control"]
            low = -0.5 if own else -3 - i / 100
            row = {"request_id": r["request_id"], "text": "", "token_logprobs": [low, -0.1] * 5}
            lines.append(json.dumps(row) + "\n")
        path = wd / model / "cancer_myth" / "exposure_likelihood.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(lines))


def test_the_audit_flags_the_memorising_model_and_not_the_other(workdir):
    cfg = write_config(workdir, _config(workdir))
    run_snakemake(workdir, *(f"{R}/requests/exposure_{p}.jsonl" for p in PROBES), configfile=cfg)
    requests = [json.loads(x) for x in (workdir / R / "requests/exposure_completion.jsonl").open()]
    questions = json.loads((REPO / "resources/demo/cancer_myth/questions.json").read_text())
    assert len(requests) == 2 * len(questions)
    first = questions[0]["example_question"]
    opening = requests[0]["messages"][0]["content"].split("First part: ")[1].split("\n")[0]
    assert first.startswith(opening) and first == opening + " " + requests[0]["meta"]["truth"]

    _replays(workdir)
    page = "results/report/cancer_myth/tables/exposure.html"
    run_snakemake(workdir, f"{R}/tables/exposure.tsv", page, configfile=cfg)
    # every probe answer went through `generate`
    for model in ("memorised", "unseen"):
        for p in PROBES:
            assert (workdir / R / f"responses/{model}/exposure_{p}.jsonl").exists()
    items = pd.read_csv(workdir / R / "exposure/memorised.tsv", sep="\t", dtype={"item_id": str})
    assert list(items.columns[:4]) == ["item_id", "probe", "score", "control_score"]
    assert len(items) == 3 * len(questions)
    replayed = items[items["probe"] != "likelihood"]
    assert (replayed["score"] == 1.0).all() and (replayed["control_score"] < 1.0).all()
    # Min-K% Prob of the replayed log-probabilities: the lowest 2 of 10 tokens
    likely = items[items["probe"] == "likelihood"]
    assert (likely["score"] == -0.5).all() and (likely["control_score"] <= -3).all()

    table = pd.read_csv(workdir / R / "tables/exposure.tsv", sep="\t").set_index(["model", "probe"])
    assert table.loc[("memorised", "completion"), "verdict"] == "exposed"
    assert table.loc[("memorised", "slot"), "verdict"] == "exposed"
    assert table.loc[("unseen", "completion"), "verdict"] == "no evidence"
    assert table.loc[("unseen", "completion"), "share_flagged"] <= 0.1
    assert table.loc[("memorised", "likelihood"), "verdict"] == "exposed"
    assert table.loc[("unseen", "likelihood"), "verdict"] == "no evidence"

    # the report's page of the table: its own caption and the interval its Markdown twin states
    from oncoeval.report import catalog

    (entry,) = catalog.entries([f"{R}/tables/exposure.tsv"])
    caption = entry.caption(root=workdir)
    assert caption.startswith("Exposure audit per model and probe")
    assert "as the table states them: Intervals (95%): Wilson score interval" in caption
    assert (workdir / R / "figures/exposure.png").stat().st_size > 0
    (figure,) = catalog.entries([f"{R}/figures/exposure.png"])
    assert figure.caption(root=workdir).startswith("Exposure probe scores per model")
    html = (workdir / page).read_text()
    assert "Exposure audit per model and probe" in html and "no evidence" in html
