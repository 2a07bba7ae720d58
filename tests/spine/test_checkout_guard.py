"""The session guard of tests/conftest.py: a test that writes in the checkout's run folders is
found (the shared model store aside)."""

from __future__ import annotations

from conftest import run_folder_changes, run_folder_state


def test_a_write_in_a_run_folder_is_found_the_model_store_is_not(tmp_path):
    (tmp_path / "results" / "coral").mkdir(parents=True)
    (tmp_path / "results" / "coral" / "t.tsv").write_text("a\n")
    store = tmp_path / "cache" / "models"
    before = run_folder_state(tmp_path, store)
    store.mkdir(parents=True)  # the shared store appears (and with it cache/)
    (store / "m.gguf").write_text("weights")
    assert run_folder_changes(before, run_folder_state(tmp_path, store)) == []

    (tmp_path / "results" / "coral" / "t.tsv").write_text("ab\n")
    (tmp_path / ".snakemake").mkdir()
    (tmp_path / "cache" / "responses.jsonl").write_text("{}\n")
    assert run_folder_changes(before, run_folder_state(tmp_path, store)) == [
        "added .snakemake",
        "added cache/responses.jsonl",
        "changed results/coral/t.tsv",
    ]
