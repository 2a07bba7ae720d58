"""Alias tables: many spellings of a radiation site, or of a side effect, mapped to one name.

An alias table is a two-column TSV (``alias``, ``canonical``) with ``#`` comments. Lookups use
:func:`norm_key` on both sides, so case, punctuation and spacing differences never matter.
"""

from __future__ import annotations

import os
import re

from ...core.errors import InputError
from ...core.inputs import compare_key, read_table

_NON_WORD = re.compile(r"[^\w/+]+")


def norm_key(text: str) -> str:
    """Lower-case, punctuation to spaces, spaces collapsed: the key every alias lookup uses
    (after Unicode NFKC with invisible characters removed: NFC and NFD spellings are one key)."""
    return " ".join(_NON_WORD.sub(" ", compare_key(text).lower()).split())


def norm_name(text: str) -> str:
    """A side-effect name as tables show it: stripped, spaces collapsed, lower-case, in Unicode
    NFKC without invisible characters (so one term is never counted as two)."""
    return " ".join(compare_key(text).split()).lower()


class AliasTable:
    """alias -> canonical name; canonical names map to themselves."""

    def __init__(self, pairs: dict[str, str] | None = None):
        self._map: dict[str, str] = {}
        for alias, canonical in (pairs or {}).items():
            self.add(alias, canonical)

    def add(self, alias: str, canonical: str) -> None:
        self._map[norm_key(alias)] = canonical
        self._map.setdefault(norm_key(canonical), canonical)

    def lookup(self, text: str) -> str | None:
        return self._map.get(norm_key(text))

    def __len__(self) -> int:
        return len(self._map)

    @classmethod
    def read(cls, path: str | os.PathLike | None) -> AliasTable:
        """Read a TSV of ``alias<TAB>canonical`` rows; ``None`` gives an empty table."""
        table = cls()
        if path is None:
            return table
        df = read_table(path, "\t", "alias table", comment="#", dtype=str, keep_default_na=False)
        missing = {"alias", "canonical"} - set(df.columns)
        if missing:
            raise InputError(
                path,
                "header",
                f"alias table needs columns alias, canonical; missing {sorted(missing)}",
            )
        for i, row in df.iterrows():
            alias, canonical = row["alias"].strip(), row["canonical"].strip()
            if not alias or not canonical:
                raise InputError(path, f"row {i + 2}", "alias and canonical must both be filled")
            known = table._map.get(norm_key(alias))
            if known is not None and known != canonical and norm_key(alias) != norm_key(known):
                raise InputError(
                    path,
                    f"row {i + 2}",
                    f"alias {alias!r} already maps to {known!r}, not {canonical!r}",
                )
            table.add(alias, canonical)
        return table
