"""The benchmarks' own workflow configs stay valid as the config schema and checks grow.

The benchmarks are not part of the test run (they time things); these tests only build the DAGs
they would run, so a config change that breaks `python -m bench` fails here first.
"""

from __future__ import annotations

from conftest import dry_run_jobs

from bench import bench_cache, bench_dag
from bench._fake_api import write_requests


def test_the_cache_benchmark_config_builds_its_dag(workdir):
    write_requests(workdir / "requests.jsonl", 3)
    config = bench_cache._config(workdir, "http://127.0.0.1:9/v1", n_models=2, concurrency=1)
    jobs = dry_run_jobs(workdir, configfile=config, env={bench_cache.KEY_ENV: "sk-test"})
    assert jobs["generate"] == 2 and jobs["adhoc_requests"] == 1


def test_the_dag_benchmark_config_builds_its_dag(workdir):
    jobs = {
        n: dry_run_jobs(workdir, configfile=bench_dag.make_config(workdir, n, n_items=5))
        for n in (1, 2)
    }
    # Every study is on in the benchmark, with replay models in the default config's places.
    assert {rule.split("_")[0] for rule in jobs[1]} >= {"side", "cancer", "coral", "guidelines"}
    assert jobs[2]["generate"] > jobs[1]["generate"]
