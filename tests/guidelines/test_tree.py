"""Guideline tree schema and structural validation (broken trees stop with the node named)."""

import copy
import json

import pytest

from oncoeval.core.errors import InputError
from oncoeval.studies.guidelines.tree import load_tree, serialise_compact, tree_from_dict

from .conftest import DEMO

SMALL = {
    "prefix": "T",
    "pages": [
        {
            "page_id": "T-1",
            "nodes": [
                {
                    "id": "T-1-1",
                    "text": "start",
                    "branches": [
                        {"condition": "a", "next": "T-1-2"},
                        {"condition": "b", "next": "T-2-1"},
                    ],
                },
                {"id": "T-1-2", "text": "treat a", "recommendation": "drug A"},
            ],
        },
        {
            "page_id": "T-2",
            "nodes": [
                {"id": "T-2-1", "text": "b: more info?", "children": ["T-2-2", "T-2-3"]},
                {"id": "T-2-2", "text": "unknown", "information_limited": True},
                {
                    "id": "T-2-3",
                    "text": "treat b",
                    "recommendation": "drug B",
                    "children": ["T-2-4"],
                },
                {"id": "T-2-4", "text": "follow-up", "surveillance": True, "children": ["T-2-5"]},
                {"id": "T-2-5", "text": "done", "recommendation": "stop"},
            ],
        },
    ],
}


def broken(edit):
    data = copy.deepcopy(SMALL)
    edit(data)
    return data


def test_small_tree_size_and_depth():
    stats = tree_from_dict(SMALL).stats()
    # 7 nodes; edges 1-1>1-2, 1-1>2-1, 2-1>2-2, 2-1>2-3, 2-3>2-4, 2-4>2-5; deepest 1-1,2-1,2-3,2-4,2-5
    assert (stats["nodes"], stats["edges"], stats["pages"], stats["max_depth"]) == (7, 6, 2, 5)
    assert (stats["leaves"], stats["recommendation_nodes"], stats["information_limited_nodes"]) == (
        3,
        3,
        1,
    )


def test_cycle_is_refused_with_its_nodes():
    data = broken(lambda d: d["pages"][1]["nodes"][4].update(children=["T-2-1"]))
    with pytest.raises(InputError, match=r"cycle: T-2-1 -> T-2-3 -> T-2-4 -> T-2-5 -> T-2-1"):
        tree_from_dict(data)


def test_dangling_child_is_refused():
    data = broken(lambda d: d["pages"][1]["nodes"][0]["children"].append("T-9-9"))
    with pytest.raises(InputError, match=r"node T-2-1: child 'T-9-9' does not exist"):
        tree_from_dict(data)


def test_duplicate_id_is_refused():
    data = broken(
        lambda d: d["pages"][0]["nodes"].append(
            {"id": "T-1-2", "text": "again", "recommendation": "x"}
        )
    )
    with pytest.raises(InputError, match=r"node T-1-2: duplicate node id"):
        tree_from_dict(data)


def test_leaf_without_recommendation_is_refused():
    data = broken(lambda d: d["pages"][1]["nodes"][1].pop("information_limited"))
    with pytest.raises(InputError, match=r"node T-2-2: leaf without a recommendation"):
        tree_from_dict(data)


def test_node_on_the_wrong_page_and_schema_errors_are_refused():
    data = broken(lambda d: d["pages"][0]["nodes"][1].update(id="T-2-9"))
    with pytest.raises(InputError, match="does not belong to page T-1"):
        tree_from_dict(data)
    data = broken(lambda d: d["pages"][0]["nodes"][0].update(id="t1"))
    with pytest.raises(InputError, match="guideline tree schema"):
        tree_from_dict(data)


def test_bad_json_names_the_line(tmp_path):
    path = tmp_path / "tree.json"
    path.write_text('{"prefix": "T",\n "pages": [}')
    with pytest.raises(InputError, match=r"tree.json, line 2: not valid JSON"):
        load_tree(path)


def test_demo_tree_is_valid_and_round_trips():
    tree = load_tree(DEMO / "guideline.json")
    stats = tree.stats()
    assert stats["nodes"] == 31 and stats["pages"] == 6 and stats["unreachable_nodes"] == 0
    again = tree_from_dict(json.loads(json.dumps(tree.to_dict())))
    assert again.stats() == stats
    text = serialise_compact(tree)
    assert "LUNG-1-1 Lung carcinoma on biopsy: histology | non-small cell: LUNG-1-2" in text
    assert len(text.splitlines()) == 31
