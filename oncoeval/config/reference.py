"""The configuration reference, config/README.md, written from the schemas.

Every key, its type, its default and its meaning come from the workflow's schema as the config
check assembles it (``oncoeval.config.checks.config_schema``: config/config.schema.yaml, each registered
backend's ``CONFIG_SCHEMA``) and from each registered study's schema (config/schemas/), so no
default is written twice by hand. ``python -m oncoeval.config.reference`` (``make docs``) rewrites the
file; ``--check`` exits 1 when the committed file differs (tests/spine/test_docs_config.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import yaml

from ..core.schema import CONFIG_SCHEMA
from ..studies import STUDIES
from .checks import config_schema, study_schema

REFERENCE = CONFIG_SCHEMA.parent / "README.md"
COMMAND = "make docs"

INTRO = """\
`config/config.yaml` is the demo (demo data, embedded models, offline, CPU), and the config only
when no `--configfile` is given. A config of your own starts from the schema defaults below, never
from the demo's data paths, token caps or judges (to build on the demo, name it first:
`--configfile config/config.yaml yours.yaml`; `config/demo-construct.yaml` is used that way).
The schema is `config/config.schema.yaml` (JSON Schema 2020-12; every key has a description, and
every optional key a default; the required ones -- a model's `id`, `backend`, `path` or `model`,
and each enabled study's data files -- have none), each backend adds the keys of its model
entries (`CONFIG_SCHEMA` in `oncoeval/backends/`), and each study block has its own schema under
`config/schemas/`. Before building the DAG the workflow reports every problem of the config in one
message, one line per problem (key path, value, what is wrong): schema violations, unknown model
ids, a study's missing or absent data files, judge roles the run uses but nobody fills, PHI
routes, API key variables and each backend's own checks. A judge role is required and checked
only when the run uses it.

Paths: a relative path is read from the folder `snakemake` runs in (the repository for `make
run`; your own folder for a deployment made with `snakedeploy`). The workflow's own files that
the demo and the defaults below name under `resources/` are read from the workflow's source
when that folder has no file at that path; a `resources/...` file of your own in it is read
there ([deploying with snakedeploy](../docs/deploy.md)).

What the settings do in practice: [models and backends](../docs/models.md), [studies, their
inputs and outputs](../docs/studies.md), [departures from the papers](../docs/departures.md); all
pages: [docs/index.md](../docs/index.md).
"""


def _inline(value) -> str:
    """A value as it would be written in a config (flow-style YAML), in backticks."""
    text = yaml.safe_dump(value, default_flow_style=True, width=10**6, sort_keys=False)
    text = text.strip().removesuffix("...").strip()
    return f"`{text}`"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _resolve(schema: dict, root: dict) -> dict:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target = root
        for part in ref[2:].split("/"):
            target = target[part]
        return {**_resolve(target, root), **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def _parts(schema: dict, root: dict) -> Iterator[dict]:
    """The schema and the sub-schemas whose keys it shares: ``allOf`` members, and the ``then``
    of an ``if`` (how a nullable object declares its keys)."""
    schema = _resolve(schema, root)
    if "properties" in (schema.get("if") or {}):
        return  # a part that depends on another key's value (a backend's keys): its own section
    yield schema
    for sub in schema.get("allOf") or []:
        yield from _parts(sub, root)
    if isinstance(schema.get("then"), dict):
        yield from _parts(schema["then"], root)


def _properties(schema: dict, root: dict) -> tuple[dict, set]:
    props: dict = {}
    required: set = set()
    for part in _parts(schema, root):
        props.update(part.get("properties") or {})
        required.update(part.get("required") or [])
    return props, required


def _type(schema: dict, root: dict) -> str:
    schema = _resolve(schema, root)
    if "enum" in schema:
        kind = " / ".join(_inline(v) for v in schema["enum"])
    elif "const" in schema:
        kind = _inline(schema["const"])
    elif "anyOf" in schema or "oneOf" in schema:
        kind = " or ".join(_type(s, root) for s in schema.get("anyOf") or schema["oneOf"])
    else:
        types = schema.get("type", [])
        types = [types] if isinstance(types, str) else list(types)
        if "array" in types and isinstance(schema.get("items"), dict):
            item = _type(schema["items"], root)
            types = [f"list of {item}" if t == "array" and item else t for t in types]
        kind = " or ".join(types)
    bounds = []
    for key, sign in (
        ("minimum", "≥"),
        ("exclusiveMinimum", ">"),
        ("maximum", "≤"),
        ("exclusiveMaximum", "<"),
    ):
        if key in schema:
            bounds.append(f"{sign} {schema[key]}")
    if "pattern" in schema:
        bounds.append(f"matching `{schema['pattern']}`")
    if bounds:
        kind = f"{kind} ({', '.join(bounds)})" if kind else ", ".join(bounds)
    if schema.get("x-names-model"):
        kind = f"{kind}; names models" if kind else "names models"
    return kind


def _rows(schema: dict, root: dict, prefix: str = "", skip=()) -> Iterator[str]:
    """One table row per key, nested objects' keys under dotted names after their parent."""
    props, required = _properties(schema, root)
    for key, sub in props.items():
        if key in skip:
            continue
        name = f"{prefix}{key}"
        full = _resolve(sub, root)
        ref = sub.get("$ref", "")
        children, _ = _properties(full, root)
        if "default" in full:
            default = _inline(full["default"])
            if children and full["default"] in ({}, None):
                default += " (keys below)" if not ref else ""
        elif key in required:
            default = "(required)"
        else:
            default = "(none)"
        meaning = full.get("description", "")
        if ref.startswith("#/$defs/") and children:
            section = ref.rsplit("/", 1)[1]
            meaning = f"{meaning} Keys: [`{section}`](#{section}) below."
        yield f"| `{name}` | {_cell(_type(full, root))} | {_cell(default)} | {_cell(meaning)} |"
        if children and not ref:
            yield from _rows(full, root, f"{name}.")


def _table(rows: list[str]) -> list[str]:
    return ["| key | type | default | meaning |", "|---|---|---|---|", *rows, ""]


def _backends(schema: dict) -> Iterator[tuple[str, dict]]:
    for part in schema["$defs"]["model"].get("allOf") or []:
        backend = part["if"]["properties"]["backend"]["const"]
        yield backend, part["then"]


def reference() -> str:
    """The text of config/README.md."""
    schema = config_schema()
    # The shared blocks a key points to (a model's resources): one section each.
    linked = json.dumps(schema["$defs"]["model"])
    out = [
        "# Configuration reference",
        "",
        f"<!-- Written by `{COMMAND}` (python -m oncoeval.config.reference) from the schemas; "
        "edit the schemas' descriptions and defaults, not this file. -->",
        "",
        INTRO,
        "## Top-level keys",
        "",
        _cell(schema.get("description", "")),
        "",
        *_table(list(_rows(schema, schema, skip=("studies",)))),
        "`studies`: " + _cell(schema["properties"]["studies"].get("description", "")),
        "",
        "## Model entries",
        "",
        _cell(schema["$defs"]["model"].get("description", "")),
        "",
        *_table(list(_rows(schema["$defs"]["model"], schema))),
    ]
    for backend, part in _backends(schema):
        out += [
            f"### `backend: {backend}`",
            "",
            *_table(list(_rows(part, schema))),
        ]
    for name, sub in schema["$defs"].items():
        if f'"#/$defs/{name}"' not in linked or not _properties(sub, schema)[0]:
            continue
        out += [
            f"### {name}",
            "",
            _cell(sub.get("description", "")),
            "",
            *_table(list(_rows(sub, schema))),
        ]
    out += [
        "## Study blocks",
        "",
        "One block per registered study under `studies:`; each is checked against its schema "
        "`config/schemas/{study}.schema.yaml`.",
        "",
    ]
    for study in STUDIES:
        sub = study_schema(study)
        out += [
            f"### {study}",
            "",
            _cell(sub.get("description", "")),
            "",
            *_table(list(_rows(sub, sub))),
        ]
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is stale")
    parser.add_argument("--output", type=Path, default=REFERENCE)
    args = parser.parse_args(argv)
    text = reference()
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is stale: run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
