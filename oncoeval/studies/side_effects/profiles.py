"""Patient profiles in pairs (base, specified) and the radiation site each pair is about.

Two accepted forms:

1. the published paired sheet (``.xlsx`` or ``.csv``): one row per patient, text columns
   ``ProfilesNoLocation`` (base) and ``ProfilesLocation`` (specified), optionally ``profile_id``.
   The site is not a column: it is derived from the text the specified profile adds to, or
   replaces in, the base profile, and mapped to a reference site through the site alias table.
2. base profiles only (``profile_id``, ``profile``, optionally ``site``), plus a site per profile
   from that column or from a deterministic assignment rule; the specified profile is built by the
   paper's perturbation (§3.2, §4.2): the site is appended to each mention of "radiation", nothing
   else changes.

Both give the same records: ``profile_id``, ``site``, ``base``, ``specified``, ``added_text``.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from ...core.errors import InputError
from ...core.inputs import compare_key, is_blank, read_excel, read_table
from .aliases import AliasTable, norm_key

BASE_COLUMN = "ProfilesNoLocation"
SPECIFIED_COLUMN = "ProfilesLocation"
_TOKEN = re.compile(r"\w+|[^\w\s]")
_RADIATION = re.compile(r"\bradiation\b", re.IGNORECASE)
# Words around an inserted site that are not part of the site's name.
_FILLER = {"radiation", "therapy", "radiotherapy", "rt", "xrt", "to", "the", "of"}
# Equal tokens tolerated between two inserted pieces that together name one site.
_MAX_GAP = 3


@dataclass(frozen=True)
class Profile:
    profile_id: str
    site: str
    base: str
    specified: str
    added_text: str

    def to_dict(self) -> dict:
        return asdict(self)


class SiteError(ValueError):
    """The added text of a specified profile does not name one known site."""


def added_pieces(base: str, specified: str) -> list[tuple[int, int]]:
    """Token spans (start, end) of ``specified`` that are inserted or that replace base text.

    Tokens are compared lower-cased, so case and whitespace changes are not additions.
    """
    base_tokens = [m.group().lower() for m in _TOKEN.finditer(base)]
    spec_tokens = [m.group().lower() for m in _TOKEN.finditer(specified)]
    matcher = difflib.SequenceMatcher(None, base_tokens, spec_tokens, autojunk=False)
    return [(j1, j2) for op, _, _, j1, j2 in matcher.get_opcodes() if op in ("insert", "replace")]


def _span_text(specified: str, start: int, end: int) -> str:
    spans = [m.span() for m in _TOKEN.finditer(specified)]
    return specified[spans[start][0] : spans[end - 1][1]]


def lookup_site(text: str, site_aliases: AliasTable) -> str | None:
    """The site named by an added piece of text, trying it without filler words around it."""
    words = norm_key(text).split()
    if not words:
        return None
    candidates = [words]
    lo, hi = 0, len(words)
    while lo < hi and words[lo] in _FILLER:
        lo += 1
    while hi > lo and words[hi - 1] in _FILLER:
        hi -= 1
    candidates.append(words[lo:hi])
    for cand in candidates:
        if cand:
            site = site_aliases.lookup(" ".join(cand))
            if site is not None:
                return site
    return None


def derive_site(base: str, specified: str, site_aliases: AliasTable) -> tuple[str, str]:
    """(site, added text) of a paired profile; SiteError when it names no site or two."""
    pieces = [
        (a, b)
        for a, b in added_pieces(base, specified)
        if re.search(r"\w", _span_text(specified, a, b))
    ]
    if not pieces:
        raise SiteError("the specified profile adds no text to the base profile")
    texts = [_span_text(specified, a, b) for a, b in pieces]
    found = [lookup_site(t, site_aliases) for t in texts]
    if None in found:
        # Inserted words that happen to equal nearby base words split one insertion in two;
        # join neighbouring pieces and try again.
        merged = [list(pieces[0])]
        for a, b in pieces[1:]:
            if a - merged[-1][1] <= _MAX_GAP:
                merged[-1][1] = b
            else:
                merged.append([a, b])
        texts = [_span_text(specified, a, b) for a, b in merged]
        found = [lookup_site(t, site_aliases) for t in texts]
    unknown = [t for t, s in zip(texts, found, strict=True) if s is None]
    if unknown:
        raise SiteError(
            f"cannot map the added text {unknown[0]!r} to a reference site; "
            "add it to the site alias table"
        )
    if len(set(found)) > 1:
        raise SiteError(f"the added texts {texts} name different sites {sorted(set(found))}")
    return found[0], " | ".join(dict.fromkeys(texts))


def specify(base: str, site_text: str, mentions: str = "all") -> str:
    """The paper's perturbation: ``radiation`` -> ``radiation (site_text)``, nothing else."""
    count = 0 if mentions == "all" else 1
    return _RADIATION.sub(lambda m: f"{m.group()} ({site_text})", base, count=count)


def _read_sheet(path: Path) -> pd.DataFrame:
    suffix = path.suffix.lower()
    if suffix in (".xlsx", ".xlsm"):
        df = read_excel(path, "profile sheet", dtype=str)
    elif suffix in (".csv", ".tsv"):
        df = read_table(path, "," if suffix == ".csv" else "\t", "profile sheet", dtype=str)
    else:
        raise InputError(path, None, f"unknown profile file type {suffix!r} (xlsx, csv or tsv)")
    df = df.fillna("")
    df.columns = [str(c).strip() for c in df.columns]
    return df


def _ids(path, df: pd.DataFrame) -> list[str]:
    if "profile_id" in df.columns:
        ids = [str(v).strip() for v in df["profile_id"]]
    else:
        width = max(2, len(str(len(df))))
        ids = [f"p{i + 1:0{width}d}" for i in range(len(df))]
    for i, pid in zip(df.index, ids, strict=True):
        if not re.fullmatch(r"[A-Za-z0-9._-]+", pid):
            raise InputError(path, f"row {i + 2}", f"profile_id {pid!r} must match [A-Za-z0-9._-]+")
    keys = [compare_key(p) for p in ids]
    dupes = sorted({p for p, k in zip(ids, keys, strict=True) if keys.count(k) > 1})
    if dupes:
        raise InputError(path, "profile_id", f"duplicate profile ids {dupes}")
    return ids


def load_profiles(
    path: str | os.PathLike,
    site_aliases: AliasTable,
    reference_sites: list[str],
    form: str = "auto",
    site_assignment=None,
    site_phrases: dict | None = None,
    mentions: str = "all",
) -> list[Profile]:
    """Read profiles in either form and return validated pairs with their sites."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, "profile file not found")
    df = _read_sheet(path)
    df = df[(df != "").any(axis=1)]  # blank rows
    if df.empty:
        raise InputError(path, "line 2", "no profiles under the header")
    if form == "auto":
        if {BASE_COLUMN, SPECIFIED_COLUMN} <= set(df.columns):
            form = "paired"
        elif "profile" in df.columns:
            form = "base"
        else:
            raise InputError(
                path,
                "header",
                f"expected columns {BASE_COLUMN} and {SPECIFIED_COLUMN} (paired form) or "
                f"profile_id and profile (base form); found {list(df.columns)}",
            )
    if form == "paired":
        profiles = _paired(path, df, site_aliases)
    else:
        profiles = _base_only(
            path, df, site_aliases, reference_sites, site_assignment, site_phrases or {}, mentions
        )
    for prof in profiles:
        if prof.site not in reference_sites:
            raise InputError(
                path,
                f"profile {prof.profile_id}",
                f"site {prof.site!r} (from {prof.added_text!r}) is not a site of the reference "
                f"{reference_sites}",
            )
    return profiles


def _paired(path, df: pd.DataFrame, site_aliases: AliasTable) -> list[Profile]:
    missing = {BASE_COLUMN, SPECIFIED_COLUMN} - set(df.columns)
    if missing:
        raise InputError(path, "header", f"paired form needs columns {sorted(missing)}")
    out = []
    for (i, row), pid in zip(df.iterrows(), _ids(path, df), strict=True):
        where = f"row {i + 2} (profile {pid})"
        base, spec = row[BASE_COLUMN].strip(), row[SPECIFIED_COLUMN].strip()
        if is_blank(base) or is_blank(spec):
            raise InputError(path, where, "both the base and the specified profile must be filled")
        try:
            site, added = derive_site(base, spec, site_aliases)
        except SiteError as exc:
            raise InputError(path, where, str(exc)) from None
        out.append(Profile(pid, site, base, spec, added))
    return out


def assign_sites(ids: list[str], rule, reference_sites: list[str]) -> dict[str, str]:
    """Sites for base-only profiles: ``cycle`` (reference sites in turn) or an id -> site map."""
    if rule == "cycle":
        return {pid: reference_sites[i % len(reference_sites)] for i, pid in enumerate(ids)}
    if isinstance(rule, dict):
        return {str(k): str(v) for k, v in rule.items()}
    return {}


def _base_only(
    path, df, site_aliases, reference_sites, site_assignment, site_phrases, mentions
) -> list[Profile]:
    ids = _ids(path, df)
    if "site" in df.columns and site_assignment is None:
        raw_sites = dict(zip(ids, df["site"], strict=True))
    elif site_assignment is not None:
        raw_sites = assign_sites(ids, site_assignment, reference_sites)
        stray = [k for k in raw_sites if k not in ids]
        if stray:
            raise InputError(
                path,
                f"profile_id {stray[0]!r}",
                f"studies.side_effects.site_assignment names profile {stray[0]!r}, which is not "
                f"in this file (its ids: {ids[:5]}{' ...' if len(ids) > 5 else ''}); fix the id "
                "or remove the entry",
            )
    else:
        raise InputError(
            path,
            "header",
            "base-only profiles need a 'site' column or a site_assignment rule in the config",
        )
    out = []
    for (i, row), pid in zip(df.iterrows(), ids, strict=True):
        where = f"row {i + 2} (profile {pid})"
        base = row["profile"].strip()
        raw = str(raw_sites.get(pid, "")).strip()
        if is_blank(base):
            raise InputError(path, where, "empty profile")
        if not raw:
            raise InputError(path, where, "no site for this profile")
        site = site_aliases.lookup(raw) or lookup_site(raw, site_aliases)
        if site is None:
            raise InputError(path, where, f"site {raw!r} is not in the site alias table")
        if not _RADIATION.search(base):
            raise InputError(path, where, "the profile never mentions radiation to specify")
        phrase = site_phrases.get(site, site)
        spec = specify(base, phrase, mentions)
        try:
            check, added = derive_site(base, spec, site_aliases)
        except SiteError as exc:
            raise InputError(path, where, f"site phrase {phrase!r}: {exc}") from None
        if check != site:
            raise InputError(path, where, f"site phrase {phrase!r} reads back as {check!r}")
        out.append(Profile(pid, site, base, spec, added))
    return out
