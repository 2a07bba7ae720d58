"""Guideline decision trees: loading, validation, size and depth, compact serialisation.

A tree is JSON in the shape of ``guideline_tree.schema.json`` (next to this module): pages of
nodes with ids ``<PREFIX>-<page>-<node>``. :func:`load_tree` checks the schema and then what a
schema cannot see: unique ids, ids matching their page, children that exist, no cycles, and every
leaf either a recommendation or marked ``information_limited``. Any problem raises
:class:`~oncoeval.core.errors.InputError` naming the node.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import jsonschema

from ...core.errors import InputError
from ...core.inputs import read_json

SCHEMA_PATH = Path(__file__).with_name("guideline_tree.schema.json")
# The label (and answer) for a patient whose care does not follow the guideline: a one-node path.
NOT_COMPLIANT = "NOT_GUIDELINE_COMPLIANT"


@cache
def tree_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


@dataclass
class Node:
    id: str
    page: str
    text: str
    children: list[str] = field(default_factory=list)
    conditions: dict[str, str] = field(default_factory=dict)  # child id -> condition text
    recommendation: str | None = None
    information_limited: bool = False
    surveillance: bool = False

    @property
    def terminal(self) -> bool:
        """A path may end here: a treatment node or an information-limited node."""
        return self.recommendation is not None or self.information_limited


@dataclass
class GuidelineTree:
    prefix: str
    root: str
    nodes: dict[str, Node]
    pages: dict[str, str]  # page id -> title
    name: str = ""
    version: str = ""

    def __contains__(self, node_id: str) -> bool:
        return node_id in self.nodes

    def is_edge(self, parent: str, child: str) -> bool:
        return parent in self.nodes and child in self.nodes[parent].children

    def parents(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {n: [] for n in self.nodes}
        for node in self.nodes.values():
            for child in node.children:
                out[child].append(node.id)
        return out

    def stats(self) -> dict:
        """Size and depth: nodes, edges, pages, leaves, treatment and information-limited nodes,
        and the maximal depth (nodes on the longest path from the root)."""
        edges = sum(len(n.children) for n in self.nodes.values())
        leaves = [n for n in self.nodes.values() if not n.children]
        return {
            "guideline": self.name,
            "version": self.version,
            "prefix": self.prefix,
            "root": self.root,
            "pages": len(self.pages),
            "nodes": len(self.nodes),
            "edges": edges,
            "leaves": len(leaves),
            "recommendation_nodes": sum(n.recommendation is not None for n in self.nodes.values()),
            "information_limited_nodes": sum(n.information_limited for n in self.nodes.values()),
            "max_depth": self.max_depth(),
            "unreachable_nodes": len(self.nodes) - len(self.reachable()),
        }

    def reachable(self) -> set[str]:
        seen, stack = set(), [self.root]
        while stack:
            nid = stack.pop()
            if nid not in seen:
                seen.add(nid)
                stack.extend(self.nodes[nid].children)
        return seen

    def max_depth(self) -> int:
        """Nodes on the longest path from the root."""
        depth: dict[str, int] = {}

        def visit(nid: str) -> int:  # the graph is acyclic (checked on load)
            if nid not in depth:
                depth[nid] = 1 + max((visit(c) for c in self.nodes[nid].children), default=0)
            return depth[nid]

        return visit(self.root)

    def to_dict(self) -> dict:
        pages: dict[str, list[dict]] = {p: [] for p in self.pages}
        for node in self.nodes.values():
            row: dict = {"id": node.id, "text": node.text}
            if node.children:
                row["branches"] = [
                    {"condition": node.conditions[c], "next": c}
                    if node.conditions.get(c)
                    else {"next": c}
                    for c in node.children
                ]
            if node.recommendation is not None:
                row["recommendation"] = node.recommendation
            if node.information_limited:
                row["information_limited"] = True
            if node.surveillance:
                row["surveillance"] = True
            pages[node.page].append(row)
        return {
            "guideline": self.name,
            "version": self.version,
            "prefix": self.prefix,
            "root": self.root,
            "pages": [
                {"page_id": p, "title": self.pages[p], "nodes": nodes} for p, nodes in pages.items()
            ],
        }


def load_tree(path: str | os.PathLike) -> GuidelineTree:
    return tree_from_dict(read_json(path, "guideline tree"), path)


def load_prepared_tree(path: str | os.PathLike) -> GuidelineTree:
    """The canonical tree the prepare stage wrote (``prepared/tree.json``)."""
    return tree_from_dict(json.loads(Path(path).read_text(encoding="utf-8")), path)


def tree_from_dict(data: dict, path: str | os.PathLike = "<tree>") -> GuidelineTree:
    """Build and validate a tree; raise InputError for the first problem found."""
    errors = sorted(
        jsonschema.Draft202012Validator(tree_schema()).iter_errors(data),
        key=lambda e: list(e.absolute_path),
    )
    if errors:
        err = errors[0]
        where = "/".join(str(p) for p in err.absolute_path) or "top level"
        raise InputError(path, where, f"does not match the guideline tree schema: {err.message}")
    prefix = data["prefix"]
    nodes: dict[str, Node] = {}
    pages: dict[str, str] = {}
    for page in data["pages"]:
        pid = page["page_id"]
        if pid in pages:
            raise InputError(path, f"page {pid}", "duplicate page id")
        if not pid.startswith(prefix + "-"):
            raise InputError(path, f"page {pid}", f"page id does not start with prefix {prefix!r}")
        pages[pid] = page.get("title", "")
        for raw in page["nodes"]:
            nid = raw["id"]
            if nid in nodes:
                raise InputError(path, f"node {nid}", "duplicate node id")
            if nid.rsplit("-", 1)[0] != pid:
                raise InputError(path, f"node {nid}", f"node id does not belong to page {pid}")
            if raw.get("children") and raw.get("branches"):
                raise InputError(path, f"node {nid}", "give either children or branches, not both")
            children = list(raw.get("children") or [])
            conditions = {}
            for br in raw.get("branches") or []:
                children.append(br["next"])
                if br.get("condition"):
                    conditions[br["next"]] = br["condition"]
            if len(set(children)) != len(children):
                raise InputError(path, f"node {nid}", "the same child is listed twice")
            nodes[nid] = Node(
                id=nid,
                page=pid,
                text=raw["text"],
                children=children,
                conditions=conditions,
                recommendation=raw.get("recommendation"),
                information_limited=bool(raw.get("information_limited", False)),
                surveillance=bool(raw.get("surveillance", False)),
            )
    root = data.get("root") or data["pages"][0]["nodes"][0]["id"]
    if root not in nodes:
        raise InputError(path, "root", f"root node {root!r} does not exist")
    for node in nodes.values():
        for child in node.children:
            if child not in nodes:
                raise InputError(path, f"node {node.id}", f"child {child!r} does not exist")
        if not node.children and not node.terminal:
            raise InputError(
                path,
                f"node {node.id}",
                "leaf without a recommendation; add one or mark it information_limited: true",
            )
    cycle = _find_cycle(nodes)
    if cycle:
        raise InputError(path, f"node {cycle[0]}", "cycle: " + " -> ".join(cycle))
    return GuidelineTree(
        prefix=prefix,
        root=root,
        nodes=nodes,
        pages=pages,
        name=data.get("guideline", ""),
        version=data.get("version", ""),
    )


def _find_cycle(nodes: dict[str, Node]) -> list[str] | None:
    """A cycle as a list of ids (first id repeated at the end), or None. Iterative DFS."""
    white, grey, black = 0, 1, 2
    color = dict.fromkeys(nodes, white)
    for start in nodes:
        if color[start] != white:
            continue
        stack = [(start, iter(nodes[start].children))]
        trail = [start]
        color[start] = grey
        while stack:
            nid, it = stack[-1]
            child = next(it, None)
            if child is None:
                color[nid] = black
                stack.pop()
                trail.pop()
            elif color[child] == grey:
                return trail[trail.index(child) :] + [child]
            elif color[child] == white:
                color[child] = grey
                trail.append(child)
                stack.append((child, iter(nodes[child].children)))
    return None


def serialise_compact(tree: GuidelineTree) -> str:
    """The tree as one short line per node, for prompts (page headers dropped: ids carry them).

    ``LUNG-2-1 Fit for surgery? | fit: LUNG-2-2 | inoperable: LUNG-2-3``; treatment nodes carry
    ``=> TREAT: ...``, information-limited nodes ``=> END (information limited)``, and a plain
    child list reads ``| next: ID``.
    """
    lines = []
    for node in tree.nodes.values():
        line = f"{node.id} {node.text}"
        if node.recommendation is not None:
            line += f" => TREAT: {node.recommendation}"
        if node.information_limited:
            line += " => END (information limited)"
        for child in node.children:
            line += f" | {node.conditions.get(child) or 'next'}: {child}"
        lines.append(line)
    return "\n".join(lines)
