"""Exports and the crate written whole or not at all.

Each artifact is written under a hidden name beside its place (``.name.tmp-<pid>``) and renamed
onto it once complete, so a killed ``make export``/``make publish`` leaves the previous complete
artifact, or none, never a half-written folder or zip under the final name. A folder already in
place is first renamed aside (``.name.old-<pid>``) and removed after the swap; the leftovers of
a killed run are cleared (an old folder put back when the kill fell between the two renames).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink(missing_ok=True)


def clear_leftovers(final: Path) -> None:
    """Remove what a killed run left beside ``final``; put an old copy back if ``final`` is
    missing (killed between moving it aside and renaming the new one in)."""
    final = Path(final)
    olds = sorted(final.parent.glob(f".{final.name}.old-*"))
    if olds and not final.exists():
        os.replace(olds.pop(), final)
    for path in [*olds, *final.parent.glob(f".{final.name}.tmp-*")]:
        _remove(path)


def _swap_in(tmp: Path, final: Path) -> None:
    old = final.parent / f".{final.name}.old-{os.getpid()}"
    if final.exists() or final.is_symlink():
        os.replace(final, old)
    os.replace(tmp, final)
    _remove(old)


@contextlib.contextmanager
def _staged(final, place, make_folder: bool = False):
    """Yield the hidden path beside ``final`` (a fresh folder if ``make_folder``); on success
    ``place(tmp, final)`` puts it in place, on failure it is removed."""
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    clear_leftovers(final)
    tmp = final.parent / f".{final.name}.tmp-{os.getpid()}"
    if make_folder:
        tmp.mkdir()
    try:
        yield tmp
    except BaseException:
        _remove(tmp)
        raise
    place(tmp, final)


def folder(final):
    """Yield a fresh hidden folder path beside ``final``; on success it becomes ``final``."""
    return _staged(final, _swap_in, make_folder=True)


def file(final):
    """Yield a hidden file path beside ``final``; on success it is renamed onto ``final``."""
    return _staged(final, os.replace)


def remove(final) -> None:
    """Remove ``final`` and its leftovers (an artifact that would be stale beside new ones)."""
    final = Path(final)
    clear_leftovers(final)
    _remove(final)
