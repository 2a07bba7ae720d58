"""Config files read strictly, before the config is validated or used.

Snakemake reads ``--configfile`` (and the Snakefile's ``configfile:``) itself, and its YAML
reader keeps the last of two equal keys, builds Python objects from ``!!python/...`` tags and
expands aliases without a bound. rules/common.smk therefore reads the same files again here
(``workflow.configfiles``) and stops the run when one of them:

- is larger than ``MAX_BYTES``;
- holds a key twice in one mapping (named, with both lines): YAML keeps one of them silently,
  and a second ``contains_phi`` or ``max_cost_usd`` would change what the run may do;
- carries a tag other than YAML's standard ones (``!!str``, ``!!int``, ``!!map``...), such as
  ``!!python/name:``;
- expands, with its aliases (``*name``) followed, to more than ``MAX_NODES`` values (a
  "billion laughs" file is refused after reading its few lines, not after filling the memory).

``make export``/``make publish`` read the run's config files with :func:`read` too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from ..core.errors import ConfigError

MAX_BYTES = 1_000_000  # the demo config is ~10 kB; a paper's line-up a few times that
MAX_NODES = 200_000  # values after alias expansion (the demo config has ~1,000)
STANDARD_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}"
    for name in ("null", "bool", "int", "float", "str", "seq", "map", "merge", "timestamp",
                 "binary", "omap", "pairs", "set", "value")
)  # fmt: skip
MERGE_TAG = "tag:yaml.org,2002:merge"


def _line(node) -> int:
    return node.start_mark.line + 1


def _walk_problems(root, where: str) -> list[str]:
    """Tags and duplicate keys of the composed document (each node once), and its size with
    every alias expanded (counted with a memo, so a bomb is measured without expanding it)."""
    problems: list[str] = []
    sizes: dict[int, int] = {}
    seen: set[int] = set()

    def visit(node, path: str) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        if node.tag not in STANDARD_TAGS:
            problems.append(
                f"{where}:{_line(node)}: {path or '(top level)'}: the tag {node.tag!r} is not "
                "allowed (only YAML's standard types: strings, numbers, booleans, null, lists "
                "and mappings)"
            )
            return
        if isinstance(node, MappingNode):
            first: dict[str, int] = {}
            for key, value in node.value:
                if key.tag == MERGE_TAG:
                    visit(value, path)
                    continue
                name = key.value if isinstance(key, ScalarNode) else None
                if name is not None and name in first:
                    problems.append(
                        f"{where}: {_dotted(path, name)}: the key {name!r} is given twice in one "
                        f"mapping (lines {first[name]} and {_line(key)}); YAML would keep only "
                        "one. Remove the other."
                    )
                elif name is not None:
                    first[name] = _line(key)
                visit(key, path)
                visit(value, _dotted(path, name if name is not None else "?"))
        elif isinstance(node, SequenceNode):
            for i, item in enumerate(node.value):
                visit(item, f"{path}[{i}]")

    def size(node) -> int:
        if id(node) in sizes:
            return sizes[id(node)]
        sizes[id(node)] = 1  # a recursive alias counts once, then fails the construction
        total = 1
        if isinstance(node, MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        elif isinstance(node, SequenceNode):
            total += sum(size(item) for item in node.value)
        sizes[id(node)] = total
        return total

    visit(root, "")
    if not problems:
        n = size(root)
        if n > MAX_NODES:
            problems.append(
                f"{where}: expands to {n:,} values once its aliases (*name) are followed, more "
                f"than the {MAX_NODES:,} a config may hold; write the values out, or use fewer "
                "nested aliases"
            )
    return problems


def _dotted(path: str, name) -> str:
    return f"{path}.{name}" if path else str(name)


def read(path: str | os.PathLike) -> dict:
    """The mapping in the config file ``path``, read strictly; ConfigError naming the file,
    key and lines otherwise."""
    path = Path(path)
    where = str(path)
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise ConfigError(
                f"{where}: {size:,} bytes, more than the {MAX_BYTES:,} a config file may have"
            )
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where}: cannot be read ({exc})") from exc
    if text.lstrip().startswith("{"):  # JSON, as Snakemake tries first (tabs are fine there)
        try:
            return _json_mapping(text, where)
        except json.JSONDecodeError:
            pass  # YAML's flow style: read as YAML below
    try:
        loader = yaml.SafeLoader(text)
        try:
            root = loader.get_single_node()
            if root is None:
                return {}
            problems = _walk_problems(root, where)
            if problems:
                raise ConfigError("; ".join(problems))
            data = loader.construct_document(root)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: not valid YAML: {exc}") from exc
    except RecursionError as exc:
        raise ConfigError(f"{where}: nested too deeply (or an alias refers to itself)") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: a config file holds a mapping of keys at its top level")
    return data


def _json_mapping(text: str, where: str) -> dict:
    """A JSON config file, a key given twice in one object refused."""

    def pairs(items):
        out = {}
        for key, value in items:
            if key in out:
                raise ConfigError(
                    f"{where}: the key {key!r} is given twice in one object; JSON readers keep "
                    "only one. Remove the other."
                )
            out[key] = value
        return out

    return json.loads(text, object_pairs_hook=pairs)


def file_problems(paths) -> list[str]:
    """The problems of each config file in ``paths`` (one line per file), [] when all are
    clean."""
    problems = []
    for path in dict.fromkeys(str(p) for p in paths):
        try:
            read(path)
        except ConfigError as exc:
            problems.append(str(exc))
    return problems
