"""Profiles: site derivation on paired sheets, and the paper's perturbation on base-only sheets."""

from pathlib import Path

import pandas as pd
import pytest

from oncoeval.core.errors import InputError
from oncoeval.studies.side_effects.aliases import AliasTable
from oncoeval.studies.side_effects.profiles import SiteError, derive_site, load_profiles, specify

REPO = Path(__file__).resolve().parents[2]
ALIASES = AliasTable.read(REPO / "resources/side_effects/site_aliases.tsv")
SITES = ["APBI", "Breast Only", "Breast and Nodes", "Chest Wall", "Chest Wall and Nodes"]
BASE = (
    "Prior treatments: lumpectomy, then radiation completed in May.\nVisit: well after radiation."
)


@pytest.mark.parametrize(
    "specified, site",
    [
        # inserted in parentheses after "radiation"
        (
            "Prior treatments: lumpectomy, then radiation (chest wall and nodes) completed in May.\nVisit: well after radiation.",
            "Chest Wall and Nodes",
        ),
        # the published phrasing, "Radiation <site>", replacing the lower-case mention
        (
            "Prior treatments: lumpectomy, then Radiation Breast and Nodes completed in May.\nVisit: well after radiation.",
            "Breast and Nodes",
        ),
        # inserted without the word radiation, replacing it
        (
            "Prior treatments: lumpectomy, then Accelerated partial breast irradiation (APBI) completed in May.\nVisit: well after radiation.",
            "APBI",
        ),
        # at two places, with stray whitespace changes elsewhere
        (
            "Prior  treatments: lumpectomy, then radiation Breast Only completed in May.\nVisit:   well after Radiation Breast Only.",
            "Breast Only",
        ),
        # the inserted words also occur elsewhere in the profile
        (
            "Prior treatments: lumpectomy, then radiation chest wall and nodes completed in May.\nVisit: well after radiation.",
            "Chest Wall and Nodes",
        ),
    ],
)
def test_site_is_derived_from_the_added_text(specified, site):
    assert derive_site(BASE, specified, ALIASES)[0] == site


def test_added_text_that_names_no_site_is_an_error_naming_the_text():
    with pytest.raises(SiteError, match="'to the left axilla'"):
        derive_site(
            BASE,
            BASE.replace("radiation completed", "radiation to the left axilla completed"),
            ALIASES,
        )


def test_two_mentions_naming_different_sites_are_an_error():
    spec = BASE.replace("radiation completed", "radiation (APBI) completed").replace(
        "after radiation.", "after radiation (chest wall)."
    )
    with pytest.raises(SiteError, match="different sites"):
        derive_site(BASE, spec, ALIASES)


def test_identical_pair_is_an_error():
    with pytest.raises(SiteError, match="adds no text"):
        derive_site(BASE, BASE.replace("  ", " ").upper(), ALIASES)


def test_paired_sheet_row_with_unmappable_site_stops_with_row_and_text(tmp_path):
    sheet = tmp_path / "profiles.csv"
    pd.DataFrame(
        {
            "ProfilesNoLocation": [BASE, BASE],
            "ProfilesLocation": [
                BASE.replace("radiation completed", "radiation (APBI) completed"),
                BASE.replace("radiation completed", "radiation (pelvis) completed"),
            ],
        }
    ).to_csv(sheet, index=False)
    with pytest.raises(InputError, match=r"row 3 \(profile p02\).*'\(pelvis\)'"):
        load_profiles(sheet, ALIASES, SITES)


def test_paired_xlsx_without_ids_gets_row_ids(tmp_path):
    sheet = tmp_path / "profiles.xlsx"
    pd.DataFrame(
        {
            "ProfilesNoLocation": [BASE],
            "ProfilesLocation": [BASE.replace("then radiation", "then Radiation Chest Wall")],
        }
    ).to_excel(sheet, index=False)
    (prof,) = load_profiles(sheet, ALIASES, SITES)
    assert (prof.profile_id, prof.site, prof.added_text) == ("p01", "Chest Wall", "Chest Wall")


def test_perturbation_appends_the_site_to_each_mention_and_changes_nothing_else():
    assert specify(BASE, "chest wall") == (
        "Prior treatments: lumpectomy, then radiation (chest wall) completed in May.\n"
        "Visit: well after radiation (chest wall)."
    )
    assert (
        specify("Irradiation and Radiation.", "APBI", mentions="first")
        == "Irradiation and Radiation (APBI)."
    )


def test_base_only_sheet_with_site_column(tmp_path):
    sheet = tmp_path / "base.tsv"
    pd.DataFrame(
        {
            "profile_id": ["a", "b"],
            "profile": [BASE, BASE],
            "site": ["chest wall", "Breast + nodes"],
        }
    ).to_csv(sheet, sep="\t", index=False)
    profiles = load_profiles(
        sheet, ALIASES, SITES, site_phrases={"Breast and Nodes": "breast and regional nodes"}
    )
    assert [p.site for p in profiles] == ["Chest Wall", "Breast and Nodes"]
    assert profiles[0].specified == specify(BASE, "Chest Wall")
    assert "radiation (breast and regional nodes) completed" in profiles[1].specified
    assert profiles[1].base == BASE


def test_base_only_sheet_with_cycle_assignment_and_map(tmp_path):
    sheet = tmp_path / "base.csv"
    ids = [f"x{i}" for i in range(7)]
    pd.DataFrame({"profile_id": ids, "profile": [BASE] * 7}).to_csv(sheet, index=False)
    cycled = load_profiles(sheet, ALIASES, SITES, site_assignment="cycle")
    assert [p.site for p in cycled] == SITES + SITES[:2]
    mapped = load_profiles(sheet, ALIASES, SITES, site_assignment={i: "APBI" for i in ids})
    assert {p.site for p in mapped} == {"APBI"}
    with pytest.raises(InputError, match="need a 'site' column or a site_assignment"):
        load_profiles(sheet, ALIASES, SITES)


def test_base_profile_without_radiation_cannot_be_specified(tmp_path):
    sheet = tmp_path / "base.csv"
    pd.DataFrame({"profile_id": ["a"], "profile": ["surgery only"], "site": ["APBI"]}).to_csv(
        sheet, index=False
    )
    with pytest.raises(InputError, match="never mentions radiation"):
        load_profiles(sheet, ALIASES, SITES)


def test_demo_profiles_cover_every_site():
    demo = REPO / "resources/demo/side_effects/profiles.csv"
    profiles = load_profiles(demo, ALIASES, SITES)
    assert len(profiles) >= 6
    assert {p.site for p in profiles} == set(SITES)
