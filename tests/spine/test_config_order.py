"""Config mappings are put in key order, so a reordered YAML file gives the same params."""

from oncoeval.config.checks import sort_mappings_in_place


def test_mappings_are_sorted_at_every_level_and_lists_keep_their_order():
    config = {"b": {"seed": 0, "ci": 0.95}, "a": [{"z": 1, "y": 2}, 3], "models": ["m2", "m1"]}
    same = config
    sort_mappings_in_place(config)
    assert config is same  # the workflow's own config object, changed in place
    assert list(config) == ["a", "b", "models"]
    assert list(config["b"]) == ["ci", "seed"]
    assert list(config["a"][0]) == ["y", "z"]
    assert config["models"] == ["m2", "m1"]
    assert repr(config["b"]) == repr({"ci": 0.95, "seed": 0})
