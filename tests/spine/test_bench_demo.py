"""The demo benchmark's premise: an exported commit runs its own code, not this checkout's.

``python -m bench demo`` times the default run of an older commit beside ``HEAD``. Both share
this environment, whose editable install points at this checkout; a tree that imported this
checkout's ``oncoeval`` would time the new code twice. The test exports ``HEAD``, checks which
package a process started as the bench starts it imports, and reads the job table of a dry run.
"""

from __future__ import annotations

import subprocess
import sys

from bench.bench_dag import job_counts
from bench.bench_demo import demo_env, export_tree


def test_an_exported_tree_imports_its_own_package_and_plans_the_demo(tmp_path):
    tree = tmp_path / "tree"
    commit = export_tree("HEAD", tree)
    assert len(commit) == 40 and (tree / "Snakefile").is_file()

    code = "import oncoeval; print(oncoeval.__file__)"
    where = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=demo_env(tree),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert where == str(tree / "oncoeval" / "__init__.py")

    dry = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2", "-n", "--quiet", "rules"],
        cwd=tree,
        env=demo_env(tree),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert dry.returncode == 0, dry.stderr[-3000:]
    counts = job_counts(dry.stdout + dry.stderr)
    assert counts["generate"] > 0 and counts["total"] == sum(
        n for rule, n in counts.items() if rule != "total"
    )
