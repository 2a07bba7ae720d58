"""Clinician reference: which side effects belong to which radiation site, with onset and frequency.

Two accepted forms, normalised into one tidy table keyed by (site, side_effect):

- the published spreadsheet (``.xlsx`` or ``.csv``): a header row holding ``Side effect`` and one
  column per site; to the left of ``Side effect`` a loosely written label that joins onset and
  frequency (``Short term-common``, ``Long term- extremely rare``); a site's cell is marked ``x``.
  Blank spacer rows, case variants, stray spaces, a side effect listed under two frequencies for
  different sites, and misspellings (fixed through the side-effect alias table) are all expected.
- a tidy ``.tsv`` with columns ``site``, ``side_effect``, ``onset``, ``frequency``.

Tidy values: ``onset`` in {short, long}; ``frequency`` in {common, uncommon, rare,
extremely_rare}; ``side_effect`` lower-case with single spaces; ``site`` the canonical name from
the site alias table (a site header unknown to the table stands for itself).
"""

from __future__ import annotations

import difflib
import logging
import os
import re
from pathlib import Path

import pandas as pd

from ...core.errors import InputError
from ...core.inputs import is_blank, read_excel, read_table
from .aliases import AliasTable, norm_key, norm_name

log = logging.getLogger(__name__)

ONSETS = ("short", "long")
FREQUENCIES = ("common", "uncommon", "rare", "extremely_rare")
COLUMNS = ["site", "side_effect", "onset", "frequency"]

_LABEL = re.compile(r"^(short|long)\s*term\s*(extremely rare|extremely_rare|uncommon|common|rare)$")
_MARKS = {"x", "✓", "✔", "yes", "y", "1", "true"}


def parse_label(text: str) -> tuple[str, str] | None:
    """``'Long term- extremely rare'`` -> ``('long', 'extremely_rare')``; None if not a label."""
    match = _LABEL.match(norm_key(text).replace("_", " ").replace("-", " "))
    if not match:
        return None
    return match.group(1), match.group(2).replace(" ", "_")


def _cell(value) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    return "" if is_blank(str(value)) else str(value).strip()


def _read_grid(path: Path) -> pd.DataFrame:
    suffix = path.suffix.lower()
    if suffix in (".xlsx", ".xlsm"):
        grid = read_excel(path, "reference", header=None, dtype=object)
    elif suffix in (".csv", ".tsv", ".txt"):
        sep = "," if suffix == ".csv" else "\t"
        grid = read_table(path, sep, "reference", header=None, dtype=object, keep_default_na=False)
    else:
        raise InputError(path, None, f"unknown reference file type {suffix!r} (xlsx, csv or tsv)")
    return grid.map(_cell)


def load_reference(
    path: str | os.PathLike,
    site_aliases: AliasTable | None = None,
    name_aliases: AliasTable | None = None,
) -> pd.DataFrame:
    """Read either reference form and return the tidy table (sorted by site, side effect)."""
    path = Path(path)
    site_aliases = site_aliases or AliasTable()
    name_aliases = name_aliases or AliasTable()
    if not path.is_file():
        raise InputError(path, None, "reference file not found")
    grid = _read_grid(path)
    filled = grid[(grid != "").any(axis=1)]
    if filled.empty:
        raise InputError(path, None, "reference file is empty")
    first = [norm_key(v).replace(" ", "_") for v in filled.iloc[0]]
    if set(COLUMNS) <= set(first):
        twice = [c for c in COLUMNS if first.count(c) > 1]
        if twice:
            raise InputError(path, "header", f"column {twice[0]!r} given twice; rename one")
        rows = _tidy_rows(path, grid, filled.index[0], first)
    else:
        rows = _published_rows(path, grid)
    return _assemble(path, rows, site_aliases, name_aliases)


def _tidy_rows(path, grid, header_idx, header) -> list[dict]:
    col = {name: header.index(name) for name in COLUMNS}
    rows = []
    for idx in grid.index[grid.index > header_idx]:
        values = {name: grid.iat[idx, col[name]] for name in COLUMNS}
        if not any(values.values()):
            continue
        where = f"row {idx + 1}"
        for name, value in values.items():
            if not value:
                raise InputError(path, where, f"empty {name}")
        onset = norm_key(values["onset"]).replace(" term", "").strip()
        frequency = norm_key(values["frequency"]).replace(" ", "_")
        if onset not in ONSETS:
            raise InputError(path, where, f"onset {values['onset']!r} is not one of {ONSETS}")
        if frequency not in FREQUENCIES:
            raise InputError(
                path, where, f"frequency {values['frequency']!r} is not one of {FREQUENCIES}"
            )
        rows.append(
            {
                "where": where,
                "site": values["site"],
                "name": values["side_effect"],
                "onset": onset,
                "frequency": frequency,
            }
        )
    return rows


def _find_header(path, grid) -> tuple[int, int]:
    for idx in grid.index:
        for j, value in enumerate(grid.loc[idx]):
            if norm_key(value) in ("side effect", "side effects"):
                return idx, j
    raise InputError(path, None, "no header row with a 'Side effect' column (nor a tidy header)")


def _published_rows(path, grid) -> list[dict]:
    header_idx, name_col = _find_header(path, grid)
    if name_col == 0:
        raise InputError(
            path, f"row {header_idx + 1}", "no onset/frequency column before 'Side effect'"
        )
    label_col = name_col - 1
    site_cols = [
        (j, grid.iat[header_idx, j])
        for j in range(name_col + 1, grid.shape[1])
        if grid.iat[header_idx, j]
    ]
    if not site_cols:
        raise InputError(path, f"row {header_idx + 1}", "no site columns after 'Side effect'")
    rows: list[dict] = []
    carried: tuple[str, str] | None = None
    for idx in grid.index[grid.index > header_idx]:
        where = f"row {idx + 1}"
        label, name = grid.iat[idx, label_col], grid.iat[idx, name_col]
        marks = {site: grid.iat[idx, j] for j, site in site_cols}
        if not label and not name and not any(marks.values()):
            carried = None  # a spacer row ends a block
            continue
        if label:
            parsed = parse_label(label)
            if parsed is None:
                raise InputError(
                    path,
                    where,
                    f"cannot read onset and frequency from {label!r} "
                    "(expected e.g. 'Short term-common' or 'Long term - extremely rare')",
                )
            carried = parsed
        if not name:
            if any(marks.values()):
                raise InputError(path, where, "sites are marked but the side effect is empty")
            continue
        if carried is None:
            raise InputError(path, where, f"side effect {name!r} has no onset/frequency label")
        bad = {s: v for s, v in marks.items() if v and v.lower() not in _MARKS}
        if bad:
            raise InputError(path, where, f"unreadable site marks {bad} (use x or leave blank)")
        marked = [site for site, v in marks.items() if v]
        if not marked:
            log.info("%s %s: %r is marked for no site; ignored", path, where, name)
        onset, frequency = carried
        for site in marked:
            rows.append(
                {"where": where, "site": site, "name": name, "onset": onset, "frequency": frequency}
            )
    return rows


def _assemble(path, rows, site_aliases: AliasTable, name_aliases: AliasTable) -> pd.DataFrame:
    seen: dict[tuple[str, str], dict] = {}
    for row in rows:
        site = site_aliases.lookup(row["site"]) or " ".join(row["site"].split())
        name = norm_name(name_aliases.lookup(row["name"]) or row["name"])
        key = (site, name)
        prev = seen.get(key)
        if prev is not None:
            if (prev["onset"], prev["frequency"]) != (row["onset"], row["frequency"]):
                raise InputError(
                    path,
                    row["where"],
                    f"{name!r} at site {site!r} is {row['onset']}/{row['frequency']} here but "
                    f"{prev['onset']}/{prev['frequency']} at {prev['where']}",
                )
            continue
        seen[key] = {**row, "site": site, "side_effect": name}
    if not seen:
        raise InputError(path, None, "no side effect is marked for any site")
    table = pd.DataFrame([{c: r[c] for c in COLUMNS} for r in seen.values()], columns=COLUMNS)
    _warn_near_duplicates(path, sorted(table["side_effect"].unique()))
    table = table.sort_values(["site", "side_effect"]).reset_index(drop=True)
    # where each site is first named, for errors found later (a site no profile has)
    table.attrs["site_rows"] = {}
    for row in seen.values():
        table.attrs["site_rows"].setdefault(row["site"], row["where"])
    return table


def _warn_near_duplicates(path, names: list[str]) -> None:
    """Log pairs of names that look like misspellings of each other (not merged: add an alias)."""
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            if difflib.SequenceMatcher(None, a, b).ratio() >= 0.93:
                log.warning(
                    "%s: %r and %r look like one side effect spelt two ways; "
                    "add an alias to merge them",
                    path,
                    a,
                    b,
                )


def vocabulary(reference: pd.DataFrame) -> list[str]:
    """The grounded vocabulary: distinct normalised side effects, alphabetical."""
    return sorted(reference["side_effect"].unique())


def sites(reference: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(reference["site"]))


def site_items(reference: pd.DataFrame, site: str) -> pd.DataFrame:
    """The reference rows of one site (side_effect, onset, frequency)."""
    return reference[reference["site"] == site].reset_index(drop=True)
