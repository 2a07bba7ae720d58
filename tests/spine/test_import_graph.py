"""The package's modules import each other without a circle: each one can be read (and
imported) after the modules it names, deferred imports inside functions included. And no
import points up a floor (CONTRIBUTING.md: the floors): `lint-imports` checks the contracts of
pyproject.toml (``[tool.importlinter]``) on the package as it is in this checkout."""

from __future__ import annotations

import ast
import graphlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, root: Path, known: set[str]) -> set[str]:
    """The package modules ``path`` imports anywhere in it, each named by the deepest module
    the imported name lies in (``from .parse import judge`` imports module ``parse``)."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            # A package's __init__ runs before its modules: importing it is no step back.
            if target and target != name and not name.startswith(target + "."):
                found.add(target)
    return found


def import_circle(package: Path) -> list[str] | None:
    """One circle of modules importing each other (the first back to the start), or None."""
    root = package.parent
    paths = sorted(package.rglob("*.py"))
    known = {module_name(p, root) for p in paths}
    graph = {module_name(p, root): imported_modules(p, root, known) for p in paths}
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        return exc.args[1]
    return None


def test_no_module_of_the_package_is_in_an_import_circle():
    assert import_circle(REPO / "oncoeval") is None


def test_a_deferred_import_back_is_a_circle(tmp_path):
    package = tmp_path / "pkg"
    (package / "study").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "study" / "__init__.py").write_text("")
    (package / "study" / "jury.py").write_text("from .parse import judge\n")
    (package / "study" / "parse.py").write_text("def f():\n    from .jury import reading\n")
    assert sorted(set(import_circle(package))) == ["pkg.study.jury", "pkg.study.parse"]
    (package / "study" / "parse.py").write_text("from .. import study\n")
    assert import_circle(package) is None


LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` on the ``oncoeval`` package under ``root``, with this checkout's
    contracts (function-level imports count: grimp reads every import statement)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT_IMPORTS), str(REPO / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def package_copy(tmp_path: Path) -> Path:
    shutil.copytree(
        REPO / "oncoeval", tmp_path / "oncoeval", ignore=shutil.ignore_patterns("__pycache__")
    )
    return tmp_path / "oncoeval"


def test_no_import_points_up_a_floor_and_no_packages_import_each_other():
    result = lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout, result.stdout


def test_an_upward_import_inside_a_function_breaks_the_floors(tmp_path):
    io = package_copy(tmp_path) / "core" / "io.py"
    io.write_text(
        io.read_text() + "\n\ndef _up():\n    from ..workflow import dag\n\n    return dag\n"
    )
    result = lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout
    assert "oncoeval.core is not allowed to import oncoeval.workflow" in result.stdout
    assert "oncoeval.core.io -> oncoeval.workflow.dag" in result.stdout


def test_studies_and_the_report_no_longer_import_each_other(tmp_path):
    """The two arrows the floors removed stay removed: a study that draws through the report
    (as studies did through report/figures.py) or reads the config checks is refused."""
    aggregate = package_copy(tmp_path) / "studies" / "coral" / "aggregate.py"
    aggregate.write_text(aggregate.read_text() + "\nfrom ...report import summary  # noqa\n")
    workflow = tmp_path / "oncoeval" / "studies" / "coral" / "workflow.py"
    workflow.write_text(workflow.read_text() + "\nfrom ...config import checks  # noqa\n")
    result = lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout
    assert "oncoeval.studies.coral.aggregate -> oncoeval.report.summary" in result.stdout
    assert "oncoeval.studies.coral.workflow -> oncoeval.config.checks" in result.stdout


def test_a_new_module_at_the_root_must_be_given_a_floor(tmp_path):
    (package_copy(tmp_path) / "helpers.py").write_text('"""Somewhere."""\n')
    result = lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout
    assert "helpers" in result.stdout, result.stdout
