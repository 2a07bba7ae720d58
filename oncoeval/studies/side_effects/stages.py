"""File-to-file entry points of the study's rules (scripts/side_effects/*.py call these)."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from ...errors import InputError
from ...inputs import read_template
from ...io import read_jsonl, read_tsv, write_jsonl, write_table
from ...records import read_responses, write_requests
from ...stats import BootstrapSettings
from . import pipeline, tables
from .aliases import AliasTable
from .matchers import LLMMatcher, MatchResult, make_matcher
from .profiles import load_profiles
from .prompts import build_requests
from .reference import load_reference, sites, vocabulary

log = logging.getLogger(__name__)


def prepare(
    profiles_path,
    reference_path,
    site_aliases_path,
    side_effect_aliases_path,
    out_profiles,
    out_reference,
    out_vocabulary,
    form="auto",
    site_assignment=None,
    site_phrases=None,
    mentions="all",
) -> None:
    site_aliases = AliasTable.read(site_aliases_path)
    reference = load_reference(
        reference_path, site_aliases, AliasTable.read(side_effect_aliases_path)
    )
    profiles = load_profiles(
        profiles_path,
        site_aliases,
        sites(reference),
        form=form or "auto",
        site_assignment=site_assignment,
        site_phrases=site_phrases,
        mentions=mentions or "all",
    )
    _check_reference_sites(reference_path, reference, profiles, site_aliases)
    write_jsonl(out_profiles, [p.to_dict() for p in profiles])
    write_table(reference, out_reference)
    vocab = vocabulary(reference)
    Path(out_vocabulary).write_text("".join(f"{v}\n" for v in vocab), encoding="utf-8")
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


def write_list_requests(
    profiles_path, vocabulary_path, templates, list_size, max_new_tokens, out_path
) -> None:
    profiles = read_jsonl(profiles_path)
    vocab = Path(vocabulary_path).read_text(encoding="utf-8").splitlines()
    requests = build_requests(profiles, templates, vocab, tuple(list_size), max_new_tokens)
    write_requests(out_path, requests)
    log.info(
        "%d requests (%d profiles x 2 variants x %d regimes)",
        len(requests),
        len(profiles),
        len(templates),
    )


def parse_file(responses_path, out_path) -> dict:
    rows = pipeline.parse_responses(read_responses(responses_path))
    write_jsonl(out_path, rows)
    counts = pd.Series([r["status"] for r in rows], dtype=object).value_counts().to_dict()
    log.info("parsed %d responses: %s", len(rows), counts)
    return counts


def write_judge_requests(
    parsed_path, reference_path, template_path, max_new_tokens, out_path
) -> None:
    tasks = pipeline.match_tasks(read_jsonl(parsed_path), pipeline.read_reference(reference_path))
    judge = LLMMatcher(read_template(template_path), max_new_tokens)
    # Empty lists need no judge: they have no pairs by definition.
    write_requests(out_path, judge.requests([t for _, t in tasks if t.left and t.right]))


def match_file(
    parsed_path, reference_path, settings, out_path, synonyms_path=None, judged_path=None
) -> None:
    reference = pipeline.read_reference(reference_path)
    tasks = pipeline.match_tasks(read_jsonl(parsed_path), reference)
    # Two distinct terms of this vocabulary are never paired with each other.
    vocab = vocabulary(reference)
    method = settings["method"]
    plain = [t for _, t in tasks]
    if method == "llm":
        asked = [t for t in plain if t.left and t.right]
        results = LLMMatcher("").read(asked, read_responses(judged_path), vocab)
        results.update({t.key: MatchResult() for t in plain if not (t.left and t.right)})
    else:
        matcher = make_matcher(method, settings, synonyms_path=synonyms_path)
        results = matcher.run(plain, vocab)
    pipeline.write_matches(out_path, tasks, results, method)
    bad = sum(r.status != "ok" for r in results.values())
    log.info(
        "%s matcher: %d tasks, %d not usable (unparseable, truncated, contradictory or failed "
        "judge answers)",
        method,
        len(plain),
        bad,
    )


def score_files(parsed_path, matches_path, reference_path, scores_path, overlap_path) -> None:
    scores, overlap = pipeline.score(
        read_jsonl(parsed_path), read_jsonl(matches_path), pipeline.read_reference(reference_path)
    )
    write_table(scores, scores_path)
    write_table(overlap, overlap_path)
    log.info("scores: %s", scores["status"].value_counts().to_dict())


def write_tables(
    models,
    score_paths,
    overlap_paths,
    table_paths,
    markdown_paths,
    figure_paths,
    settings: BootstrapSettings,
) -> None:
    scores = {m: read_tsv(p) for m, p in zip(models, score_paths, strict=True)}
    overlaps = {m: read_tsv(p) for m, p in zip(models, overlap_paths, strict=True)}
    built = tables.build_tables(scores, overlaps, settings)
    unscored = sum(int(s["precision"].isna().sum()) for s in scores.values())
    for (name, table), tsv, md in zip(built.items(), table_paths, markdown_paths, strict=True):
        assert Path(tsv).stem == name, (name, tsv)
        write_table(
            table, tsv, md, title=tables.TITLES[name], notes=tables.notes(settings, unscored, name)
        )
    tables.plot_precision_recall(scores, settings, figure_paths[0])
    tables.plot_recall_strata(built, figure_paths[1])
