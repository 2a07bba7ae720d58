"""Prepare stage: profiles (either form) and the clinician reference, validated, in canonical
files (profiles.jsonl, reference.tsv, vocabulary.txt)."""

from __future__ import annotations

import logging
from pathlib import Path

from ...core.errors import InputError
from ...core.io import write_jsonl, write_table
from .aliases import AliasTable
from .profiles import load_profiles
from .reference import load_reference, sites, vocabulary

log = logging.getLogger(__name__)


def prepare(inputs: dict, out: dict, *, form, site_assignment, site_phrases, mentions) -> None:
    """Profiles, reference and vocabulary, validated, in canonical files.

    ``inputs``: the rule's named inputs ``profiles``, ``reference``, ``site_aliases`` and
    ``side_effect_aliases``; ``out``: its outputs ``profiles``, ``reference`` and ``vocabulary``.
    ``form``, ``site_assignment``, ``site_phrases``, ``mentions``: the study block's
    ``profiles_form``, ``site_assignment``, ``site_phrases`` and ``specify_mentions``."""
    site_aliases = AliasTable.read(inputs["site_aliases"])
    reference = load_reference(
        inputs["reference"], site_aliases, AliasTable.read(inputs["side_effect_aliases"])
    )
    profiles = load_profiles(
        inputs["profiles"],
        site_aliases,
        sites(reference),
        form=form,
        site_assignment=site_assignment,
        site_phrases=site_phrases,
        mentions=mentions,
    )
    _check_reference_sites(inputs["reference"], reference, profiles, site_aliases)
    write_jsonl(out["profiles"], [p.to_dict() for p in profiles])
    write_table(reference, out["reference"])
    vocab = vocabulary(reference)
    Path(out["vocabulary"]).write_text("".join(f"{v}\n" for v in vocab), encoding="utf-8")
    per_site = reference.groupby("site").size().to_dict()
    log.info(
        "%d profiles; reference: %d items per site %s; vocabulary of %d",
        len(profiles),
        len(reference),
        per_site,
        len(vocab),
    )
    for p in profiles:
        log.info("profile %s: site %s (added text %r)", p.profile_id, p.site, p.added_text)


def _check_reference_sites(path, reference, profiles, site_aliases: AliasTable) -> None:
    """Stop on a reference site that no profile has and the site alias table does not know: a
    misspelt site whose side effects would otherwise join every grounded prompt's vocabulary."""
    profile_sites = sorted({p.site for p in profiles})
    for site in sites(reference):
        if site in profile_sites or site_aliases.lookup(site) is not None:
            continue
        where = reference.attrs.get("site_rows", {}).get(site, "")
        raise InputError(
            path,
            f"{where} (site {site!r})".strip(),
            f"site {site!r} matches no profile's site {profile_sites} and is not in the site "
            "alias table; fix its name or add it to the table",
        )
