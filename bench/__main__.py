"""Run the benchmarks: ``python -m bench`` (all) or ``python -m bench NAME [NAME ...]``.

Each ``bench/bench_NAME.py`` defines ``run(out_dir: Path) -> dict`` that measures what it says side
by side in one run (a bench with options takes them as ``run(out_dir, argv)``: ``python -m bench
coverage --quick``) and returns a JSON-able dict with a ``summary`` list of Markdown lines. Results
go to ``bench/results/NAME.json``; ``bench/results/SUMMARY.md`` collects the summaries. Quote
ratios, not absolute times: the machines are shared and noisy.
"""

from __future__ import annotations

import importlib
import json
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def available() -> list[str]:
    return sorted(p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))


def main(argv: list[str]) -> int:
    split = next((i for i, a in enumerate(argv) if a.startswith("-")), len(argv))
    names, options = argv[:split] or available(), argv[split:]
    if options and len(names) != 1:
        print("options go to one benchmark: python -m bench NAME --option ...", file=sys.stderr)
        return 2
    unknown = [n for n in names if n not in available()]
    if unknown:
        print(f"unknown benchmarks {unknown}; available: {available()}", file=sys.stderr)
        return 2
    RESULTS.mkdir(parents=True, exist_ok=True)
    for name in names:
        module = importlib.import_module(f"bench.bench_{name}")
        started = time.perf_counter()
        print(f"== {name}", flush=True)
        result = module.run(RESULTS, options) if options else module.run(RESULTS)
        result.setdefault("machine", platform.platform())
        result["wall_s"] = round(time.perf_counter() - started, 2)
        (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=2))
        print("\n".join(result.get("summary", [])), flush=True)
    summary = ["# Benchmark summary", ""]
    for name in available():
        path = RESULTS / f"{name}.json"
        if path.exists():
            summary += [f"## {name}", ""] + json.loads(path.read_text()).get("summary", []) + [""]
    (RESULTS / "SUMMARY.md").write_text("\n".join(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
