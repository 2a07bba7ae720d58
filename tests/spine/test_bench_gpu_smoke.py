"""The GPU benchmark's code on the CPU (issue #21): every engine, the identity check and the rule.

``ONCOEVAL_GPU_DEVICE=cpu ONCOEVAL_GPU_SHAPE=tiny`` runs the benchmark on a small random Llama in
fp32, where batching changes no greedy token: every engine must give one-by-one ``generate``'s
tokens (identical share 1.0), and the rule must answer every request.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_gpu_bench_runs_every_engine_and_the_rule_on_the_cpu(tmp_path):
    env = dict(
        os.environ,
        PYTHONPATH=str(REPO),
        ONCOEVAL_GPU_DEVICE="cpu",
        ONCOEVAL_GPU_SHAPE="tiny",
        ONCOEVAL_GPU_LAYERS="1",
        ONCOEVAL_GPU_NEW="4",
        ONCOEVAL_GPU_BATCHES="1",
        ONCOEVAL_GPU_ENGINE_BATCHES="4",
        ONCOEVAL_MODEL_STORE=str(tmp_path / "models"),
        OMP_NUM_THREADS="1",
    )
    code = (
        "import json, sys; from pathlib import Path; from bench import bench_gpu; "
        "json.dump(bench_gpu.run(Path(sys.argv[1])), sys.stdout)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    rows = {(r["mode"], r["batch_size"]): r for r in result["rows"]}
    for engine in ("loop", "static", "continuous", "auto"):
        equal, mixed = rows[(f"engine_{engine}", 4)], rows[(f"engine_{engine}_mixed", 4)]
        assert equal["new_tokens"] == 8 * 4, engine  # 8 requests x 4 new tokens
        assert mixed["new_tokens"] == 2 * (1 + 1 + 2 + 4), engine  # caps 4>>3..4 in turn
        assert equal["identical"] == 1.0, engine
    assert rows[("rule", 64)]["new_tokens"] == 128 * 4
    assert "auto picks loop here" in result["notes"]
    assert any("auto / faster library engine" in line for line in result["summary"])


def test_balanced_rounds_put_every_engine_in_every_place_and_after_every_other():
    sys.path.insert(0, str(REPO))
    from bench.bench_gpu import ENGINES, balanced_order

    rounds = [balanced_order(list(ENGINES), r) for r in range(len(ENGINES))]
    # Every engine once in every place (a Latin square)...
    for place in range(len(ENGINES)):
        assert sorted(r[place] for r in rounds) == sorted(ENGINES)
    # ...and, within the rounds, once right after every other engine (4 x 3 ordered pairs).
    pairs = [(r[i], r[i + 1]) for r in rounds for i in range(len(ENGINES) - 1)]
    assert len(pairs) == len(set(pairs)) == len(ENGINES) * (len(ENGINES) - 1)
