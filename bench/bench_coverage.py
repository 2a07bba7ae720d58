"""Do the comparison's intervals cover and its verdicts hold? (issue #34 item 6.)

``python -m bench coverage [--reps R] [--quick] [--out PATH] [--docs] ...`` simulates studies of
known truth (bench/coverage_sim.py: bounded scores skewed and central, 0/1 outcomes at p = 0.05,
0.5, 0.95, PCS-like scores in {-1, 0, 1}; independent units or clusters of 2-5 units with an
intra-cluster correlation of 0.3; 6-200 clusters) and runs the engine of this tree on them
through bench/coverage_engine.py. Per cell it reports

- the coverage of a model's mean interval (exact, by enumerating every sample, for 0/1 and PCS
  scores of independent units where there are few enough samples), and the share of those
  intervals with zero width;
- for a family of ``--models`` models compared on the measure, all pairs, as the comparison table
  does (multiplicity included): under the global null (all models equal) the family-wise error
  (any pair declared ahead/behind) and the coverage of a difference interval of 0; the printed
  minimum detectable difference (median over the studies); then, with one model truly ahead by
  that mdd, the power of its row's decision and its interval's coverage of the true difference;
  and over both, the share of rows whose interval and decision agree (the interval excludes 0
  exactly where the row is significant).

The targets (issue #34): coverage >= 0.93 in every cell at 12-50 clusters (the docs claim
0.93-0.97 only where it holds), every row coherent, family-wise error <= 0.05 + 2 Monte Carlo
SE, power at the printed mdd 0.75-0.85 at >= 12 clusters. Mirror-image kinds (Beta mean 0.9,
p = 0.95) run the mean interval only: their families are those of their mirrors with the sign
of every difference flipped.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import os
import subprocess
import sys
import time
import zlib
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import optimize, stats
from threadpoolctl import threadpool_limits

from bench import coverage_engine, coverage_sim
from bench.coverage_sim import KINDS

CLUSTERS = (6, 12, 21, 50, 200)
MIRRORS = {"score_high": "score_low", "binary_95": "binary_05"}
ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "coverage.md"
TARGET_LOW, TARGET_HIGH = 0.93, 0.97
POWER_LOW, POWER_HIGH = 0.75, 0.85
ALPHA = 0.05


@dataclass(frozen=True)
class Cell:
    kind: str
    clustered: bool
    clusters: int

    @property
    def design(self) -> str:
        return "clusters of 2-5" if self.clustered else "independent"

    def seed(self, base: int, part: str) -> int:
        return zlib.crc32(f"{self.kind}/{self.clustered}/{self.clusters}/{part}".encode()) ^ base


def _covers(low, high, truth) -> bool:
    return bool(low <= truth + 1e-12 and truth - 1e-12 <= high)


def mean_coverage(eng, cell: Cell, reps: int, seed: int, limit: int) -> dict:
    """Coverage and zero-width share of one model's mean interval: exact where every sample can
    be enumerated (independent units of a discrete kind), else over ``reps`` simulated studies."""
    kind = KINDS[cell.kind]
    truth = kind.mean()
    samples = (
        None if cell.clustered else coverage_sim.enumerate_independent(kind, cell.clusters, limit)
    )
    hit = zero = weight = 0.0
    if samples is not None:
        for counts, p in samples:
            values = np.repeat(kind.values, counts)
            _, low, high = eng.mean_interval(values, None, kind)
            hit += p * _covers(low, high, truth)
            zero += p * bool(high - low <= 1e-12)
            weight += p
        return {"mean_cov": hit / weight, "mean_zero": zero / weight, "mean_reps": "exact"}
    rng = np.random.default_rng(seed)
    for _ in range(reps):
        scores, clusters = coverage_sim.draw(kind, rng, cell.clusters, cell.clustered, [0.0])
        _, low, high = eng.mean_interval(scores[0], clusters, kind)
        hit += _covers(low, high, truth)
        zero += bool(high - low <= 1e-12)
    return {"mean_cov": hit / reps, "mean_zero": zero / reps, "mean_reps": reps}


@contextlib.contextmanager
def _no_forced_gc():
    """statsmodels' multipletests calls gc.collect() on every call (0.15 s each here, most of a
    family's time); the bench makes hundreds of thousands of calls. Results are unchanged."""
    collect = gc.collect
    gc.collect = lambda *args, **kwargs: 0
    try:
        yield
    finally:
        gc.collect = collect


def _median_mdd(mdds) -> tuple[float, float]:
    """(median printed mdd, share of studies that print one); NaN where under half do. The
    median is the mean of the middle fifth of the printed values (40th-60th percentile by
    rank): an exact test's mdd takes one value per count of discordant pairs, and the plain
    median of such steps stays on one step while the truth moves, so the fixed point found
    on it sat wherever a step crossed, not where the studies' mdds centre."""
    mdds = np.asarray(mdds, dtype=float)
    printed = float(np.isfinite(mdds).mean()) if mdds.size else 0.0
    if printed < 0.5:
        return math.nan, printed
    ranked = np.sort(mdds[np.isfinite(mdds)])
    low, high = int(math.floor(0.4 * ranked.size)), int(math.ceil(0.6 * ranked.size))
    return float(ranked[low : max(high, low + 1)].mean()), printed


class _Tally:
    """Coherent rows and the nominal level of the difference intervals over every family."""

    def __init__(self):
        self.coherent = self.rows = 0
        self.levels = set()

    def add(self, fam) -> None:
        self.coherent += int(fam.coherent.sum())
        self.rows += fam.coherent.size
        self.levels.add(round(fam.level, 4))


PILOT_ROUNDS = 6
PILOT_TOLERANCE = 0.02
PILOT_STUDIES = 300


def _fixed_point(kind, start: float, printed_mdd, reps: int, models: int) -> float:
    """The true difference that the studies having it print as their mdd (median): from the
    null's median, rounds of a fifth as many studies (20 to ``PILOT_STUDIES``) at the current difference
    t, each giving g(t) = median - t; a plain step (t = median) until some g > 0 and some g < 0
    bracket the root, then the secant between the nearest two, until |g| is under 2% of t (at
    most ``PILOT_ROUNDS``). Stopping a plain iteration at a 5% move (as before) left t short of
    the root wherever the printed mdd grows with the truth (rare 0/1 outcomes), which measured
    the power below the mdd the studies print. NaN: none printed, or the range leaves no room
    for the difference."""
    target = start
    seen: list[tuple[float, float]] = []  # (t, median - t)
    for _ in range(PILOT_ROUNDS):
        lead, rest = kind.shift_for(target) if np.isfinite(target) else (math.nan, math.nan)
        if not (np.isfinite(lead) and np.isfinite(rest)):
            return math.nan
        shifts = [lead] + [rest] * (models - 1)
        pilot = max(20, min(PILOT_STUDIES, reps // 5))
        median, _ = _median_mdd([printed_mdd(shifts) for _ in range(pilot)])
        if not np.isfinite(median):
            return target
        gap = median - target
        seen.append((target, gap))
        if abs(gap) < PILOT_TOLERANCE * target:
            return target
        above = [p for p in seen if p[1] > 0]
        below = [p for p in seen if p[1] < 0]
        if above and below:
            (t0, g0), (t1, g1) = max(above), min(below)
            target = t0 + g0 * (t1 - t0) / (g0 - g1)
        else:
            target = median
    return target


def _middle_fifth(values, probs) -> float:
    """``_median_mdd`` of infinitely many studies: the mean of the 40th-60th percentiles of a
    discrete distribution (NaN values dropped; NaN where they hold half the mass or more)."""
    values, probs = np.asarray(values, dtype=float), np.asarray(probs, dtype=float)
    finite = np.isfinite(values)
    if probs[finite].sum() <= 0.5 * probs.sum():
        return math.nan
    order = np.argsort(values[finite])
    v, p = values[finite][order], probs[finite][order] / probs[finite].sum()
    upper = np.cumsum(p)
    part = np.clip(np.minimum(upper, 0.6) - np.maximum(upper - p, 0.4), 0.0, None)
    return float(part @ v / 0.2)


def _mcnemar_fixed_point(eng, kind, n: int, models: int) -> float:
    """The fixed point of ``_fixed_point`` for independent 0/1 units compared by exact McNemar,
    computed exactly: a row's printed mdd depends only on its count D of discordant pairs, and
    at a true difference t, D ~ Binomial(n, P(a != b)), so the middle fifth of the printed mdds
    is a known function h(t), and the root of h(t) = t is found by bisection (brentq) rather
    than from pilot medians. Pilot rounds stopping within 2% settled 3% short of it at p = 0.5,
    21 units, where the power climbs steeply with the difference (0.74 measured there, 0.80 at
    the root). NaN: none printed, or the range leaves no room."""
    mdd_of = []
    for d in range(n + 1):  # one study per count: a wins the first d units, the rest equal
        a = (np.arange(n) < d).astype(float)
        scores = np.vstack([a] + [np.zeros(n)] * (models - 1))
        mdd_of.append(eng.family(scores, None, kind).mdd[0])
    counts = np.arange(n + 1)

    def gap(t: float) -> float:
        lead, rest = kind.shift_for(t)
        share, _ = coverage_sim.discordant(kind, lead, rest)
        return _middle_fifth(mdd_of, stats.binom.pmf(counts, n, share)) - t

    (lo, hi), base = kind.range, kind.mean()
    room = max(hi - base, base - lo)  # as ``shift_for`` moves the leader
    low, high = 1e-4, room * (1 - 1e-6)
    if not (np.isfinite(gap(low)) and gap(low) > 0):
        return math.nan
    if not gap(high) < 0:
        return math.nan
    return float(optimize.brentq(gap, low, high, xtol=1e-7))


def _exact_mcnemar(eng, cell: Cell) -> bool:
    """Rows of this cell are exact McNemar (independent 0/1 units, the declared engine)."""
    return (
        not cell.clustered
        and KINDS[cell.kind].scale == "binary"
        and isinstance(eng, coverage_engine.DeclaredEngine)
    )


@_no_forced_gc()
def family_metrics(eng, cell: Cell, reps: int, models: int, seed: int) -> dict:
    """Family-wise error, difference coverage and the printed mdd under the global null; power
    and coverage with model 0 truly ahead by the printed mdd; the share of coherent rows.

    The mdd a study prints depends on its spread, which a true difference changes (rare 0/1
    outcomes most), so the difference is set where the studies that have it print it: the null's
    median mdd, then the median printed by pilot rounds at that difference (``_fixed_point``)."""
    kind = KINDS[cell.kind]
    rng = np.random.default_rng(seed)
    tally = _Tally()

    def study(shifts):
        scores, clusters = coverage_sim.draw(kind, rng, cell.clusters, cell.clustered, shifts)
        fam = eng.family(scores, clusters, kind)
        tally.add(fam)
        return fam

    any_sig = cover0 = 0
    mdds = []
    for _ in range(reps):
        fam = study([0.0] * models)
        any_sig += bool(fam.significant.any())
        cover0 += _covers(fam.low[0], fam.high[0], 0.0)
        mdds.append(fam.mdd[0])
    mdd_null, printed = _median_mdd(mdds)
    out = {
        "fwer": any_sig / reps,
        "diff_cov0": cover0 / reps,
        "mdd_null": mdd_null,
        "mdd_printed": printed,
        "mdd": math.nan,
        "family_reps": reps,
        "power": math.nan,
        "diff_cov_mdd": math.nan,
    }
    if _exact_mcnemar(eng, cell):
        target = _mcnemar_fixed_point(eng, kind, cell.clusters, models)
    else:
        target = _fixed_point(kind, mdd_null, lambda shifts: study(shifts).mdd[0], reps, models)
    lead, rest = kind.shift_for(target) if np.isfinite(target) else (math.nan, math.nan)
    if np.isfinite(lead) and np.isfinite(rest):
        shifts = [lead] + [rest] * (models - 1)
        truth = kind.mean(lead) - kind.mean(rest)
        ahead = cover = 0
        for _ in range(reps):
            fam = study(shifts)
            ahead += bool(fam.significant[0] and fam.diff[0] > 0)
            cover += _covers(fam.low[0], fam.high[0], truth)
        out |= {"mdd": truth, "power": ahead / reps, "diff_cov_mdd": cover / reps}
    out["coherent"] = tally.coherent / tally.rows
    out["diff_level"] = min(tally.levels)
    return out


def run_cell(args) -> dict:
    cell, opts = args
    # one BLAS thread per worker: the sign-flip matrices are small, and threads fighting over
    # 2 shared cores made each product 8x slower
    with threadpool_limits(1), coverage_engine.cached_sign_vectors():
        return _run_cell(cell, opts)


def _run_cell(cell: Cell, opts: dict) -> dict:
    started = time.perf_counter()
    eng = coverage_engine.engine(opts["permutations"])
    row = {"kind": cell.kind, "design": cell.design, "clusters": cell.clusters}
    row |= mean_coverage(eng, cell, opts["reps"], cell.seed(opts["seed"], "mean"), opts["limit"])
    if cell.kind not in MIRRORS and opts["family_reps"]:
        seed = cell.seed(opts["seed"], "family")
        row |= family_metrics(eng, cell, opts["family_reps"], opts["models"], seed)
    row["seconds"] = round(time.perf_counter() - started, 1)
    print(
        f"  {cell.kind} {cell.design} G={cell.clusters}: {row['seconds']} s",
        file=sys.stderr,
        flush=True,
    )
    return row


# --- tables --------------------------------------------------------------------------------------


def _se(p: float, n) -> float:
    return math.sqrt(max(p * (1 - p), 0.05 * 0.95 / 4) / n) if isinstance(n, int) and n else 0.0


def misses(row: dict) -> list[str]:
    """What of this cell misses the issue's targets (empty: none)."""
    out = []
    in_range = 12 <= row["clusters"] <= 50
    for key, name in (("mean_cov", "mean"), ("diff_cov0", "diff@0"), ("diff_cov_mdd", "diff@mdd")):
        v = row.get(key, math.nan)
        level = 0.95 if key == "mean_cov" else row.get("diff_level", 0.95)
        if in_range and np.isfinite(v) and v < TARGET_LOW:
            out.append(f"{name} coverage {v:.3f} < {TARGET_LOW}")
        elif in_range and np.isfinite(v) and _cov_mark(v, level) == " ↓":
            out.append(f"{name} coverage {v:.3f} below its nominal {level:.3f} - 0.02")
    if row["clusters"] >= 2 and row.get("mean_zero", 0) > 0:
        out.append(f"zero-width mean intervals {row['mean_zero']:.3g}")
    if np.isfinite(row.get("coherent", math.nan)) and row["coherent"] < 1:
        out.append(f"coherent rows {row['coherent']:.4f} < 1")
    if "fwer" in row:
        bound = ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / row["family_reps"])
        if row["fwer"] > bound:
            out.append(f"FWER {row['fwer']:.3f} > {bound:.3f}")
        power = row["power"]
        if row["clusters"] >= 12 and np.isfinite(power) and not POWER_LOW <= power <= POWER_HIGH:
            out.append(f"power at the mdd {power:.3f} outside {POWER_LOW}-{POWER_HIGH}")
        if row["clusters"] >= 12 and not np.isfinite(row["mdd"]):
            out.append("no mdd printed")
    return out


def _fmt(v, mark: str = "") -> str:
    if isinstance(v, str):
        return v
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "-"
    return f"{v:.3f}{mark}"


def _cov_mark(v: float, level: float = 0.95) -> str:
    """Below / above the nominal level -+ 0.02 (0.93-0.97 for a 95% interval)."""
    if not np.isfinite(v):
        return ""
    if v < level - (0.95 - TARGET_LOW):
        return " ↓"
    return " ↑" if v > level + (TARGET_HIGH - 0.95) else ""


COLUMNS = [
    ("measure", "measure"), ("design", "design"), ("clusters", "G"),
    ("mean_cov", "mean cov"), ("mean_zero", "zero-width"), ("diff_cov0", "diff cov (Δ=0)"),
    ("diff_cov_mdd", "diff cov (Δ=mdd)"), ("fwer", "FWER"), ("coherent", "coherent"),
    ("mdd", "mdd"), ("power", "power at mdd"), ("mean_reps", "R mean"),
    ("family_reps", "R family"),
]  # fmt: skip


def markdown(rows: list[dict]) -> list[str]:
    out = ["| " + " | ".join(h for _, h in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in rows:
        cells = []
        for key, _ in COLUMNS:
            if key == "measure":
                cells.append(KINDS[r["kind"]].label)
            elif key in ("mean_cov", "diff_cov0", "diff_cov_mdd"):
                v = r.get(key, math.nan)
                level = 0.95 if key == "mean_cov" else r.get("diff_level", 0.95)
                cells.append(_fmt(v, _cov_mark(v, level)))
            elif key == "fwer" and key in r:
                bound = ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / r["family_reps"])
                cells.append(_fmt(r[key], " ↑" if r[key] > bound else ""))
            elif key == "coherent" and key in r:
                cells.append(_fmt(r[key], " ✗" if r[key] < 1 else ""))
            elif key == "power" and key in r:
                v = r[key]
                bad = np.isfinite(v) and not POWER_LOW <= v <= POWER_HIGH
                cells.append(_fmt(v, (" ↓" if v < POWER_LOW else " ↑") if bad else ""))
            elif key == "mean_zero" and 0 < r[key] < 0.0005:
                cells.append(f"{r[key]:.1g}")
            elif key == "mdd" and key in r and not np.isfinite(r[key]):
                if np.isfinite(r.get("mdd_null", math.nan)):
                    cells.append(f"{r['mdd_null']:.3f} (no room)")
                else:
                    cells.append(f"none ({r['mdd_printed']:.0%} printed)")
            elif key in ("mean_reps", "family_reps", "clusters", "design"):
                cells.append(str(r.get(key, "-")))
            else:
                cells.append(_fmt(r.get(key, math.nan)))
        out.append("| " + " | ".join(cells) + " |")
    return out


def legend(opts: dict, eng_text: str, seconds: float, rows: list[dict]) -> list[str]:
    reps, fam = opts["reps"], opts["family_reps"]
    levels = sorted({r["diff_level"] for r in rows if "diff_level" in r})
    pairs = opts["models"] * (opts["models"] - 1) // 2
    return [
        f"{eng_text}. {opts['models']} models per family (all {pairs} pairs). R mean: simulated "
        "studies per mean-interval cell (exact: every sample enumerated, no Monte Carlo error); "
        "R family: simulated studies under the null, and as many with one model ahead by the mdd. "
        f"Mean intervals at 95%; difference intervals as printed, at "
        f"{', '.join(f'{v:.3f}' for v in levels) or '-'}. Monte Carlo SE of a coverage near 0.95: "
        f"{_se(0.95, reps):.4f} at R = {reps}, {_se(0.95, fam):.4f} at R = {fam}; of a FWER of "
        f"0.05: {_se(0.05, fam):.4f}. Wall time {seconds:.0f} s.",
        "",
        "Marks: ↓ / ↑ coverage below / above the nominal level -+ 0.02 (0.93-0.97 for a 95% "
        "interval); FWER ↑ above 0.05 + 2 SE; coherent ✗: some row's interval excludes 0 while "
        "its decision is not significant, or the reverse; power ↓ / ↑ outside 0.75-0.85. "
        "zero-width: share of mean intervals of zero width. FWER: share of null studies (all "
        "models equal) with any pair declared ahead/behind. mdd: the true difference at which "
        "power is measured, the median mdd printed by studies that have it (the mean of the middle fifth, "
        "so that it moves with the truth where an exact test's mdd takes steps; from the null's "
        "median by pilot rounds, a step then the secant, until it is within 2%, or exactly where the rows are exact McNemar (independent 0/1 units); none: printed in under half the null studies; - with a "
        "number: the range leaves no room for a difference that large); power: share of those studies whose row "
        "declares the leading model ahead. Mirror kinds (mean 0.9, p = 0.95) run the mean "
        "interval only. The targets apply at 12-50 clusters (coverage) and >= 12 (power).",
    ]


# --- command line --------------------------------------------------------------------------------


def parse(argv) -> dict:
    p = argparse.ArgumentParser(prog="python -m bench coverage", description=__doc__.split("\n")[0])
    p.add_argument(
        "--reps", type=int, default=2000, help="simulated studies per mean-interval cell"
    )
    p.add_argument("--family-reps", type=int, help="studies per family cell (default: --reps)")
    p.add_argument("--quick", action="store_true", help="R 300, family R 150: a few minutes")
    p.add_argument("--clusters", default=",".join(map(str, CLUSTERS)), help="comma-separated G")
    p.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated of {list(KINDS)}")
    p.add_argument("--designs", default="independent,clustered")
    p.add_argument("--models", type=int, default=3, help="models per family (all pairs compared)")
    p.add_argument("--permutations", type=int, help="sign flips per test (default: the engine's)")
    p.add_argument("--limit", type=int, default=2000, help="enumerate at most this many samples")
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    p.add_argument("--seed", type=int, default=20261127)
    p.add_argument("--out", type=Path, help="write the table here (.md) and beside it as .tsv")
    p.add_argument(
        "--render",
        type=Path,
        help="write the tables from a saved run (bench/results/coverage.json) instead of running",
    )
    p.add_argument("--docs", action="store_true", help=f"regenerate {DOCS.relative_to(ROOT)}")
    p.add_argument(
        "--stream",
        type=Path,
        help="append each finished cell's row to this JSON-lines file (smallest G first)",
    )
    a = p.parse_args(list(argv))
    reps, fam = (300, 150) if a.quick else (a.reps, a.family_reps or a.reps)
    if a.quick and a.family_reps:
        fam = a.family_reps
    return {
        "reps": reps,
        "family_reps": fam,
        "clusters": [int(g) for g in a.clusters.split(",")],
        "kinds": [k for k in a.kinds.split(",") if k],
        "designs": [d == "clustered" for d in a.designs.split(",")],
        "models": a.models,
        "permutations": a.permutations,
        "limit": a.limit,
        "jobs": a.jobs,
        "seed": a.seed,
        "out": a.out,
        "docs": a.docs,
        "render": a.render,
        "stream": a.stream,
    }


def grid(opts: dict) -> list[dict]:
    cells = [
        Cell(k, c, g) for k in opts["kinds"] for c in opts["designs"] for g in opts["clusters"]
    ]
    unknown = [k for k in opts["kinds"] if k not in KINDS]
    if unknown:
        raise SystemExit(f"coverage: unknown kinds {unknown}; known: {list(KINDS)}")
    # the slowest cells first, so that the workers finish together; when streaming, the
    # smallest first, so that a run cut short holds the small-sample cells
    if opts.get("stream"):
        order = sorted(cells, key=lambda c: (c.clusters, c.kind in MIRRORS))
    else:
        order = sorted(cells, key=lambda c: (-c.clusters, c.kind in MIRRORS))
    jobs = [(c, opts) for c in order]
    done = []

    def keep(row: dict) -> None:
        done.append(row)
        if opts.get("stream"):
            clean = {k: (None if isinstance(v, float) and not np.isfinite(v) else v)
                     for k, v in row.items()}  # fmt: skip
            with open(opts["stream"], "a") as out:
                out.write(json.dumps(clean) + "\n")

    if opts["jobs"] > 1:
        with ProcessPoolExecutor(opts["jobs"]) as pool:
            for future in as_completed([pool.submit(run_cell, j) for j in jobs]):
                keep(future.result())
    else:
        for j in jobs:
            keep(run_cell(j))
    by_cell = {(r["kind"], r["design"], r["clusters"]): r for r in done}
    return [by_cell[(c.kind, c.design, c.clusters)] for c in cells]


def write_tsv(rows: list[dict], path: Path) -> None:
    keys = ["kind", "design", "clusters"] + [k for k, _ in COLUMNS[3:]]
    keys += ["diff_level", "mdd_null", "mdd_printed", "seconds"]
    lines = ["\t".join(keys)]
    for r in rows:
        lines.append("\t".join(str(r.get(k, "")) for k in keys))
    path.write_text("\n".join(lines) + "\n")


def _commit() -> str:
    """The tree's commit (+ "dirty" with uncommitted changes), for the table's header."""
    try:
        git = ["git", "-C", str(ROOT)]
        head = subprocess.run(
            [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            [*git, "status", "--porcelain", "--", "oncoeval"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" with uncommitted changes to oncoeval/" if dirty else "")


def _span(values) -> str:
    v = [x for x in values if np.isfinite(x)]
    return f"{min(v):.3f}-{max(v):.3f}" if v else "-"


def _zero_width(share: float) -> str:
    if share == 0:
        return " No mean interval had zero width."
    return f" Zero-width mean intervals: up to {share:.3g} of a cell's samples."


def measured(rows: list[dict]) -> list[str]:
    """What the run shows, in sentences the docs may claim (from the rows alone)."""
    mid = [r for r in rows if 12 <= r["clusters"] <= 50]
    low = [r for r in mid if r["mean_cov"] < TARGET_LOW]
    high = [r for r in rows if r["mean_cov"] > TARGET_HIGH]
    fam = [r for r in rows if "fwer" in r and np.isfinite(r.get("fwer", math.nan))]
    big = [r for r in fam if r["clusters"] >= 12 and np.isfinite(r["power"])]
    off = [r for r in big if not POWER_LOW <= r["power"] <= POWER_HIGH]

    def name(r):
        return f"{KINDS[r['kind']].label}, {r['design']}, G = {r['clusters']}"

    out = [
        f"Measured: mean intervals cover {_span(r['mean_cov'] for r in mid)} at 12-50 clusters"
        + (
            f"; below 0.93 in {len(low)} cell(s): "
            + "; ".join(f"{name(r)} ({r['mean_cov']:.3f})" for r in low)
            if low
            else ", at least 0.93 in every cell"
        )
        + f". {len(high)} of {len(rows)} cells cover more than 0.97 (conservative), most at 6-12 clusters."
        + _zero_width(max(r["mean_zero"] for r in rows)),
    ]
    if fam:
        out.append(
            f"Difference intervals cover {_span(r['diff_cov0'] for r in fam)} at a true difference "
            f"of 0 and {_span(r['diff_cov_mdd'] for r in fam)} at the mdd. Rows whose interval and "
            f"decision agree: {min(r['coherent'] for r in fam):.1%} at the least. Family-wise error "
            f"under the global null: {_span(r['fwer'] for r in fam)}. Power at the printed mdd at "
            f">= 12 clusters: {_span(r['power'] for r in big)}, outside 0.75-0.85 in {len(off)} of "
            f"{len(big)} cells."
        )
    return out


def docs_page(table: list[str], head: list[str], opts: dict) -> str:
    return "\n".join(
        [
            "# Coverage and verdicts, measured",
            "",
            "<!-- Generated by `python -m bench coverage --docs` (bench/bench_coverage.py); "
            "edit the bench, not this page. -->",
            "",
            "What `python -m bench coverage` measured of the comparison engine "
            "([Comparing models](comparisons.md)) on simulated studies of known truth. Each "
            "measure is a Gaussian-copula transform of a latent normal, so its true mean and the "
            "true difference between models are known exactly: bounded scores in [0, 1] "
            "(Beta(0.5, 4.5), mean 0.1; its mirror, mean 0.9; Beta(2, 2)), 0/1 outcomes at "
            "p = 0.05, 0.5 and 0.95, and PCS-like scores in {-1, 0, 1} (P 0.1 / 0.3 / 0.6), each "
            "declared with its kind and range. Designs: independent units (G units) or G "
            "clusters of 2-5 units whose scores correlate 0.3 within a cluster; the models' "
            "scores on one unit are correlated (paired). Coverage of 0.93-0.97 is what a 95% "
            "interval should give; the cells marked below do not, and the docs claim it only "
            "where this table shows it.",
            "",
            *head,
            "",
            *table,
            "",
            f"Regenerate: `python -m bench coverage --reps {opts['reps']} --family-reps "
            f"{opts['family_reps']} --docs`.",
            "",
        ]
    )


def run(out_dir: Path, argv=()) -> dict:
    opts = parse(argv)
    started = time.perf_counter()
    if opts["render"]:
        saved = json.loads(opts["render"].read_text())
        rows = [{k: math.nan if v is None else v for k, v in r.items()} for r in saved["rows"]]
        opts |= saved.get("options", {})
        seconds = saved["seconds"]
    else:
        rows = grid(opts)
        seconds = round(time.perf_counter() - started, 1)  # as saved, so --render agrees
    eng_text = coverage_engine.engine(opts["permutations"]).describe()
    eng_text += f" (commit {_commit()})"
    if opts["render"]:  # the engine that ran, where the saved run names it
        eng_text = saved.get("engine", eng_text)
    table = markdown(rows)
    head = legend(opts, eng_text, seconds, rows)
    for line in measured(rows):
        head += ["", line]
    findings = [
        f"{r['kind']} {r['design']} G={r['clusters']}: " + "; ".join(m)
        for r in rows
        if (m := misses(r))
    ]
    if opts["out"]:
        opts["out"].parent.mkdir(parents=True, exist_ok=True)
        opts["out"].write_text("\n".join(["# Coverage bench", "", *head, "", *table, ""]))
        write_tsv(rows, opts["out"].with_suffix(".tsv"))
    if opts["docs"]:
        DOCS.write_text(docs_page(table, head, opts))
    summary = [
        *head,
        "",
        *table,
        "",
        "Cells that miss the targets:",
        *([f"- {f}" for f in findings] or ["- none"]),
    ]
    clean = [
        {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in r.items()}
        for r in rows
    ]
    kept = ("reps", "family_reps", "models", "permutations")
    return {
        "options": {k: opts[k] for k in kept},
        "engine": eng_text,  # so that --render names the engine that ran, not the tree's
        "rows": clean,
        "misses": findings,
        "seconds": round(seconds, 1),
        "summary": summary,
    }
