"""The package's modules import each other without a circle: each one can be read (and
imported) after the modules it names, deferred imports inside functions included."""

from __future__ import annotations

import ast
import graphlib
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
