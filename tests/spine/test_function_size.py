"""Every function in the package fits on a screen and takes few inputs: at most 80 lines and at
most 8 parameters (``self``/``cls`` not counted; ``*args``/``**kwargs`` count one each), read from
the code's AST. The exemptions are the ones not yet split; the list only shrinks."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

MAX_LINES = 80
MAX_PARAMS = 8

# Not yet split (issue #37 item 6). Remove an entry when its function is fixed; never add one.
LONG_EXEMPT: set[str] = set()
PARAMS_EXEMPT: set[str] = set()


def functions(root: Path):
    """``(name, lines, parameters)`` of every function and method under ``root``; a name is
    ``path:Class.function`` (nested functions under their parent's name)."""
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        stack = [(tree, "")]
        while stack:
            node, prefix = stack.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    a = child.args
                    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
                    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
                    params = [n for n in names if n not in ("self", "cls")]
                    name = f"{path.relative_to(root).as_posix()}:{prefix}{child.name}"
                    yield name, child.end_lineno - child.lineno + 1, len(params)
                    stack.append((child, f"{prefix}{child.name}."))
                elif isinstance(child, ast.ClassDef):
                    stack.append((child, f"{prefix}{child.name}."))
                else:
                    stack.append((child, prefix))


def test_functions_are_short_and_take_few_parameters():
    found = list(functions(REPO / "oncoeval"))
    assert len(found) > 500  # the walk reaches methods and nested functions
    too_long = {name: n for name, n, _ in found if n > MAX_LINES and name not in LONG_EXEMPT}
    too_many = {name: n for name, _, n in found if n > MAX_PARAMS and name not in PARAMS_EXEMPT}
    assert not too_long, f"functions over {MAX_LINES} lines (split them): {too_long}"
    assert not too_many, (
        f"functions over {MAX_PARAMS} parameters (pass a settings value): {too_many}"
    )


def test_exemptions_only_shrink():
    """An exempt function that is now short, or gone, leaves the list."""
    found = {name: (n, p) for name, n, p in functions(REPO / "oncoeval")}
    stale = {name for name in LONG_EXEMPT if found.get(name, (0, 0))[0] <= MAX_LINES}
    stale |= {name for name in PARAMS_EXEMPT if found.get(name, (0, 0))[1] <= MAX_PARAMS}
    assert not stale, f"remove from the exemption lists: {sorted(stale)}"
