"""The summary's rows: each study's headline result per model, what the run cost, and who
leads each measure, as data frames (and as a reader sees them: :func:`display_frame`).

Study tables are read by file with their known headline columns, so a study that adds columns
or rows does not break the summary; a table or column that is missing is reported as such.
Usage (requests, failures, tokens, cost, wall time) is counted from the responses files and
the ``generate`` jobs' Snakemake benchmarks. The page and its Markdown twin are written by
:mod:`.summary_html`, the end-of-run table by :mod:`.summary_terminal`.
"""

from __future__ import annotations

import fnmatch
import glob
import math
from pathlib import Path

import pandas as pd

from ..backends.failures import filtered
from ..core import layout
from ..core.io import iter_jsonl
from ..core.layout import IN_STUDY, ResultPaths
from ..core.records import Response
from ..exposure.facts import warning as exposure_warning
from ..stats.compare import BEHIND, DESCRIPTIVE, LEADER
from ..studies import STUDIES
from ..studies.contract import Answers, Headline
from . import catalog, tables

MODEL_COLUMNS = ("model", "responder", "held_out_model")
# What the model did, per model and study (oncoeval.studies.contract.Answers), beside each headline.
ANSWER_COLUMNS = ["answers", "cut_share", "unparsed_share", "failed", "filtered"]
SUMMARY_COLUMNS = [
    "study", "model", "measure", "value", "ci_low", "ci_high", "n", "n_unscored", "n_clusters",
    "unit", *ANSWER_COLUMNS, "warnings", "source",
]  # fmt: skip
SUMMARY_NOTE = (
    "Headline result of each study per model, with 95% CIs over whole clusters, chosen by the "
    "measure's declared kind and range (Wilson for a share of independent units, else a "
    "Wilson-type score interval with the effective n of the cluster-robust SE). Judged rates "
    "appear twice: as the raw judge verdicts and corrected for the judge's error measured on "
    "the validation set (or the reason no correction can be made). Beside each headline, what "
    "the model did: the share of its answers cut at the token cap, the share with nothing "
    "parsed, and its failed and filtered calls; 'warnings' flags a headline where more than "
    "half of the answers were cut or unparsed."
) + "".join(  # what a study says of its own headlines (``Study.summary_note``)
    f" {d.summary_note}" for d in catalog.STUDY_DECLARATIONS.values() if d.summary_note
)
# A headline is flagged when more than this share of the model's answers was cut or unparsed.
WARN_SHARE = 0.5
# cost_usd: every answer's recorded cost; spent_usd: answers this run's calls paid for;
# cached_usd: the recorded cost of answers read from the cache (paid for by an earlier run).
# The run's scope, last: a capped or subset run names itself in every row ("" for a full run).
SCOPE_COLUMN = "scope"
USAGE_COLUMNS = [
    "model", "requests", "failed", "cached", "prompt_tokens", "completion_tokens",
    "cost_usd", "spent_usd", "cached_usd", "wall_s",
]  # fmt: skip


def _first(columns, candidates):
    return next((c for c in candidates if c in columns), None)


def study_headlines(study: str) -> tuple[Headline, ...]:
    """The headline measures the study declares (``Study.headlines``)."""
    declared = catalog.STUDY_DECLARATIONS.get(study)
    return tuple(declared.headlines) if declared else ()


def headline_rows(results: Path, studies) -> list[dict]:
    """One row per (headline measure, model) of the enabled ``studies``, in registry order."""
    rows = []
    for h in (h for s in STUDIES if s in studies for h in study_headlines(s)):
        path = Path(results) / h.study / h.table
        base = {"study": h.study, "measure": h.measure, "source": str(path)}
        if not path.exists():
            rows.append({**base, "model": "(table not written)"})
            continue
        df = pd.read_csv(path, sep="\t")
        if h.column not in df.columns:
            rows.append({**base, "model": f"(no column {h.column})"})
            continue
        for column, value in h.where:
            if column in df.columns:
                df = df[df[column] == value]
        model_col = _first(df.columns, MODEL_COLUMNS)
        # the columns the headline declares: its n, and its unscored count (or their pattern)
        n_col = h.n_column if h.n_column in df.columns else None
        unscored = [c for c in df.columns if fnmatch.fnmatchcase(c, h.unscored)]
        ranked = _ranked_counts(Path(results) / h.study, h.measure)
        for _, r in df.iterrows():
            model = r[model_col] if model_col else ""
            counts = answer_counts(results, h.study, model) if model_col else {}
            row = {
                **base,
                **counts,
                "warnings": "; ".join(
                    w for w in (warnings_of(counts), exposure_warning(results, h.study, model)) if w
                ),
                "model": model,
                "value": _cell(r[h.column]),
                "ci_low": r.get(f"{h.column}_ci_low", float("nan")),
                "ci_high": r.get(f"{h.column}_ci_high", float("nan")),
                "n": r[n_col] if n_col else float("nan"),
                "n_unscored": _unscored(r, h.unscored, unscored),
                "n_clusters": float("nan"),
                # "n_notes" counts notes; a bare "n", the study's resampling unit
                "unit": catalog.N_COLUMNS.get(n_col or "", "").removesuffix("s")
                or (_unit_words(catalog.RESAMPLINGS.get(h.study)).split("/")[0] if n_col else ""),
            }
            # The units the interval was made over, as the leaderboard counts them, so that the
            # summary, the landing and the leaderboard state one n in one unit.
            rows.append({**row, **ranked.get(model, {})})
    return rows


def _unscored(row, declared: str, columns: list[str]):
    """The row's unscored count: its declared column, or the sum of the columns its pattern
    (``invalid_*``) names; NaN where the table has none."""
    if not columns:
        return float("nan")
    return row[declared] if declared in columns else row[columns].sum()


def _ranked_counts(study_root: Path, measure: str) -> dict[str, dict]:
    """model -> n, n_unscored, n_clusters and the unit of one measure, from the study's
    leaderboard (oncoeval.stats.compare); {} where it does not rank the measure."""
    path = study_root / IN_STUDY.table(layout.LEADERBOARD)
    if not path.exists():
        return {}
    board = pd.read_csv(path, sep="\t")
    needed = {"measure", "model", "n_units", "n_unscored"}
    if not needed <= set(board.columns):
        return {}
    resampling = catalog.RESAMPLINGS.get(study_root.name)
    out = {}
    for _, r in board[board["measure"] == measure].iterrows():
        if pd.isna(r["n_units"]):  # not compared: the table's own count stands
            continue
        out[r["model"]] = {
            "n": r["n_units"],
            "n_unscored": r["n_unscored"],
            "n_clusters": r.get("n_clusters", float("nan")),
            "unit": _unit_words(resampling),
        }
    return out


def _unit_words(resampling) -> str:
    """ "rollout/patient": the resampling unit and its cluster in a word or two each."""
    if resampling is None:
        return ""
    unit, cluster = (str(x).split(" (", 1)[0] for x in (resampling.unit, resampling.cluster))
    return unit if cluster == unit else f"{unit}/{cluster}"


def study_answers(study: str) -> Answers | None:
    """The answers a study declares (``Study.answers``), else None."""
    declared = catalog.STUDY_DECLARATIONS.get(study)
    return declared.answers if declared else None


def answer_counts(results: Path, study: str, model: str) -> dict:
    """How one model's answers in a study came out: how many, the share cut at the token cap
    (``finish_reason`` ``length``), the share with nothing parsed, failed calls, and calls the
    provider filtered (``content_filter``). NaN where the files are not there."""
    declared = study_answers(study)
    out = dict.fromkeys(ANSWER_COLUMNS, float("nan"))
    if declared is None:
        return out
    responses = Path(results) / study / IN_STUDY.responses(model, declared.requestset)
    if not responses.exists():
        return out
    rows = list(iter_jsonl(responses))
    n = len(rows)
    out["answers"] = n
    out["failed"] = sum(r.get("error") is not None for r in rows)
    out["filtered"] = sum(filtered(Response.from_dict(r)) for r in rows)
    out["cut_share"] = sum(r.get("finish_reason") == "length" for r in rows) / n if n else 0.0
    parsed = Path(results) / study / declared.parsed.format(model=model)
    if parsed.exists():
        table = _read_table(parsed)
        if len(table):
            ok = table.index.isin(table.query(declared.ok, engine="python").index)
            keys = list(declared.keys)
            parsed_any = pd.Series(ok, index=table.index).groupby([table[k] for k in keys]).any()
            unparsed = int((~parsed_any).sum())
        else:
            unparsed = 0
        out["unparsed_share"] = unparsed / n if n else 0.0
    return out


def _read_table(path: Path) -> pd.DataFrame:
    if path.suffix == ".tsv":
        df = pd.read_csv(path, sep="\t", keep_default_na=False)
    else:
        df = pd.DataFrame(list(iter_jsonl(path)))
    # Missing values read as "" so that a query like ``reason == ''`` means "no reason".
    df = df.reset_index(drop=True).astype(object)
    return df.where(df.notna(), "")


def warnings_of(counts: dict) -> str:
    """What a reader must know before trusting a headline: most answers cut or unparsed."""
    notes = []
    n = counts.get("answers")
    for column, what in (
        ("cut_share", "cut at the token cap"),
        ("unparsed_share", "nothing parsed"),
    ):
        share = counts.get(column)
        if isinstance(share, float) and not math.isnan(share) and share > WARN_SHARE:
            notes.append(f"{what} in {round(share * n)}/{int(n)} answers")
    return "; ".join(notes)


def _cell(value):
    """A number, or the text a column of numbers and reasons holds (read back as strings)."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


LEADER_COLUMNS = [
    "study",
    "measure",
    "leader",
    "equivalent or not separable",
    "behind the leader",
    "detectable difference",
]


def leader_rows(results: Path, studies) -> list[dict]:
    """Per study and compared headline measure: the leader, the models equivalent to it or not
    separable from it at this n (first, before any rank), the models significantly behind with
    their rank, and the minimum detectable difference of the study at its n (results/{study}/
    tables/leaderboard.tsv and model_comparison.tsv, oncoeval.stats.compare). A descriptive measure
    (not the study's primary one) says so beside its name."""
    rows = []
    for study in (s for s in STUDIES if s in studies):
        board_path = Path(results) / study / IN_STUDY.table(layout.LEADERBOARD)
        comparison_path = Path(results) / study / IN_STUDY.table(layout.MODEL_COMPARISON)
        if not board_path.exists():
            continue
        board = pd.read_csv(board_path, sep="\t")
        comparison = (
            pd.read_csv(comparison_path, sep="\t") if comparison_path.exists() else pd.DataFrame()
        )
        for measure, part in board.groupby("measure", sort=False):
            said = part["standing"] if "standing" in part else pd.Series(pd.NA, index=part.index)
            said = said.where(said.notna(), "").astype(str)
            leader = part[said == LEADER]
            behind = part[said == BEHIND]
            others = part[~said.isin([LEADER, BEHIND, ""])]
            descriptive = "family" in part and (part["family"] == DESCRIPTIVE).all()
            rows.append(
                {
                    "study": study,
                    "measure": measure + (" (descriptive)" if descriptive else ""),
                    "leader": ", ".join(leader["model"]) or "(no value)",
                    "equivalent or not separable": ", ".join(
                        f"{m} (no value)"  # unscored: nothing to rank or compare
                        if pd.isna(v)
                        else f"{m} ({s.replace(' from the leader', '').replace(' to the leader', '')})"
                        for m, s, v in zip(
                            others["model"], said[others.index], others["value"], strict=True
                        )
                    )
                    or "none",
                    "behind the leader": ", ".join(
                        f"{m} (rank {tables.format_count(r)})"
                        if not pd.isna(r)
                        else f"{m} (no value)"
                        for m, r in zip(behind["model"], behind["rank"], strict=True)
                    )
                    or "none",
                    "detectable difference": _mdd_text(comparison, measure),
                }
            )
    return rows


def _mdd_text(comparison: pd.DataFrame, measure: str) -> str:
    """ "about 0.12 with 21 units (80% power)": the median over the measure's pairs; or the
    sentence that no difference can be significant with its clusters and comparisons."""
    if comparison.empty or "mdd" not in comparison.columns:
        return "fewer than two models"
    part = comparison[comparison["measure"] == measure]
    if not len(part):
        return "fewer than two models"
    said = [v for v in part["mdd"] if isinstance(v, str) and v.startswith("no difference")]
    if said:
        return said[0]
    known = pd.to_numeric(part["mdd"], errors="coerce").dropna()
    if known.empty:
        return "not estimable"
    n = int(part["n_units"].fillna(0).max())
    clusters = int(part["n_clusters"].fillna(0).max()) if "n_clusters" in part else n
    unit = f"{n} units" + (f" in {clusters} clusters" if clusters != n else "")
    return f"about {known.median():.3g} with {unit}"


def _sum(values):
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _cost(values) -> float | None:
    """The cost of answers: 0 for none, None when any one's is unknown."""
    return None if any(v is None for v in values) else float(sum(values))


def usage_rows(root: Path, models=None) -> list[dict]:
    """Per model: requests, failed calls, cached answers, tokens, cost and generate wall time.

    ``models`` (model id -> the studies it is used in, as ``oncoeval.config.checks.used_models``
    gives it) keeps the count to this config's models and studies: responses an earlier config
    left under ``results/`` for another study or model are not counted. A list of ids keeps the
    models only. Cost is split into what this run's calls spent and the recorded cost of the
    answers read from the cache.
    """
    root = Path(root)
    per_model: dict[str, dict] = {}
    for path in sorted(glob.glob(str(root / ResultPaths("*").responses("*", "*")))):
        model, study = Path(path).parent.name, Path(path).parents[2].name
        if models is not None and model not in models:
            continue
        # Ad-hoc sets are named "adhoc:<set>"; their answers are under results/adhoc/.
        if isinstance(models, dict) and study not in {s.split(":")[0] for s in models[model]}:
            continue
        rows = list(iter_jsonl(path))
        u = per_model.setdefault(
            model,
            {"model": model, "_prompt": [], "_completion": [], "_spent": [], "_cached": []},
        )
        u["requests"] = u.get("requests", 0) + len(rows)
        u["failed"] = u.get("failed", 0) + sum(r.get("error") is not None for r in rows)
        u["cached"] = u.get("cached", 0) + sum(bool(r.get("cached")) for r in rows)
        u["_prompt"] += [r.get("prompt_tokens") for r in rows]
        u["_completion"] += [r.get("completion_tokens") for r in rows]
        for r in rows:
            if r.get("error") is None:  # a failed call has no cost recorded
                u["_cached" if r.get("cached") else "_spent"].append(r.get("cost_usd"))
    out = []
    for model, u in per_model.items():
        wall = 0.0
        for bench in glob.glob(str(root / "benchmarks" / "*" / "generate" / model / "*.tsv")):
            wall += float(pd.read_csv(bench, sep="\t")["s"].sum())
        # No answer of the kind: nothing spent (or read), not "not priced"; one answer of
        # unknown cost makes the sum unknown (never a partial sum, never $0).
        spent, cached = _cost(u["_spent"]), _cost(u["_cached"])
        out.append(
            {
                "model": model,
                "requests": u["requests"],
                "failed": u["failed"],
                "cached": u["cached"],
                "prompt_tokens": _sum(u["_prompt"]),
                "completion_tokens": _sum(u["_completion"]),
                "cost_usd": None if spent is None or cached is None else spent + cached,
                "spent_usd": spent,
                "cached_usd": cached,
                "wall_s": round(wall, 1),
            }
        )
    return out


def summary_frames(root: Path, studies, models=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    root = Path(root)
    headline = pd.DataFrame(headline_rows(root / layout.RESULTS, studies), columns=SUMMARY_COLUMNS)
    usage = pd.DataFrame(usage_rows(root, models), columns=USAGE_COLUMNS)
    return headline, usage


def display_frame(headline: pd.DataFrame) -> pd.DataFrame:
    """The headline rows as a reader sees them: ``value [95% CI]``, scored and unscored counts."""
    headline = headline.reindex(columns=SUMMARY_COLUMNS)
    shown = pd.DataFrame(
        {
            "study": [catalog.study_name(s) for s in headline["study"]],
            "model": headline["model"],
            "measure": headline["measure"],
            "result [95% CI]": [
                tables.format_ci(_cell(v), lo, hi)
                for v, lo, hi in zip(
                    headline["value"], headline["ci_low"], headline["ci_high"], strict=True
                )
            ],
            "n scored": [
                tables.n_text(v, c, u if isinstance(u, str) else "")
                for v, c, u in zip(
                    headline["n"], headline["n_clusters"], headline["unit"], strict=True
                )
            ],
            "unscored": [tables.format_count(v) for v in headline["n_unscored"]],
            "cut at cap": _shares(headline, "cut_share"),
            "nothing parsed": _shares(headline, "unparsed_share"),
            "failed": [tables.format_count(v) for v in headline["failed"]],
            "filtered": [tables.format_count(v) for v in headline["filtered"]],
            # An all-empty column reads back as float NaN: cast before filling.
            "warnings": headline["warnings"].astype(object).fillna("").astype(str),
        }
    )
    return shown


def _shares(headline: pd.DataFrame, column: str) -> list[str]:
    """``95% (38/40)``: a share of the model's answers with its count; "–" when not known."""
    return [
        tables.format_share(share, n)
        for share, n in zip(headline[column], headline["answers"], strict=True)
    ]


def usage_display(usage: pd.DataFrame) -> pd.DataFrame:
    usage = usage.reindex(columns=USAGE_COLUMNS)
    shown = usage.copy()
    for col in ("cost_usd", "spent_usd", "cached_usd"):
        shown[col] = [tables.format_usd(v) for v in usage[col]]
    for col in ("requests", "failed", "cached", "prompt_tokens", "completion_tokens"):
        shown[col] = [tables.format_count(v) for v in usage[col]]
    shown["wall_s"] = [tables.format_seconds(v) for v in usage["wall_s"]]
    return shown.rename(columns=tables.column_label)


def leaders_shown(leaders: pd.DataFrame) -> pd.DataFrame:
    """The leaders as a reader sees them: the study by its name."""
    return leaders.assign(study=[catalog.study_name(s) for s in leaders["study"]])


def leaders_frame(root: Path, studies) -> pd.DataFrame:
    return pd.DataFrame(leader_rows(Path(root) / layout.RESULTS, studies), columns=LEADER_COLUMNS)
