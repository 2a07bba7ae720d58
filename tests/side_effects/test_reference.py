"""Reference loader: the published spreadsheet form (when present) and messy fixtures of our own."""

from pathlib import Path

import openpyxl
import pytest

from oncoeval.core.errors import InputError
from oncoeval.studies.side_effects.aliases import AliasTable
from oncoeval.studies.side_effects.prompts import render
from oncoeval.studies.side_effects.reference import load_reference, parse_label, vocabulary

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = Path("/work/shared/data/side_effects/breast-rt-side-effects.xlsx")
PAPER = Path("/work/shared/seeds/000_035da124d9870ad8.txt")
SITE_ALIASES = AliasTable.read(REPO / "resources/side_effects/site_aliases.tsv")
NAME_ALIASES = AliasTable.read(REPO / "resources/side_effects/side_effect_aliases.tsv")
SITES = ["APBI", "Chest Wall", "Chest Wall and Nodes", "Breast and Nodes", "Breast Only"]


def _row(table, site, name):
    rows = table[(table.site == site) & (table.side_effect == name)]
    assert len(rows) <= 1
    return None if rows.empty else (rows.iloc[0].onset, rows.iloc[0].frequency)


@pytest.mark.parametrize(
    "label, expected",
    [
        ("Short term-common", ("short", "common")),
        ("Short term- uncommon", ("short", "uncommon")),
        ("Long term - Common", ("long", "common")),
        ("Long term- extremely rare", ("long", "extremely_rare")),
        ("long-term rare", ("long", "rare")),
        ("Side effect", None),
    ],
)
def test_onset_frequency_labels_are_read_however_they_are_written(label, expected):
    assert parse_label(label) == expected


def _write_xlsx(path, rows):
    wb = openpyxl.Workbook()
    for row in rows:
        wb.active.append(list(row))
    wb.save(path)
    return path


HEADER = (
    None,
    "Side effect",
    "Accelerated partial breast irradiation (APBI)",
    "Chest Wall",
    "Breast Only",
)


def test_messy_fixture_normalises_to_one_tidy_table(tmp_path):
    path = _write_xlsx(
        tmp_path / "messy.xlsx",
        [
            HEADER,
            ("Short term-common", "Skin Redness ", "x", "X", "x"),
            ("Short term-common", "Peeling", None, None, None),  # listed for no site: ignored
            (None, None, None, None, None),
            (None, None, None, None, None),
            ("Short term- uncommon", "Peeling", "x", "x", None),
            ("Short term- uncommon", "Decreasd blood cell count", None, "x", None),
            (None, None, None, None, None),
            ("Long term - Common", "Breast shrinkage", None, None, "x"),
            ("Long term - Uncommon", "Breast Shrinkage", "x", None, None),  # case variant
            ("Long term - Uncommon", "breast  shrinkage", "x", None, None),  # same again: merged
            ("Long term- extremely rare", "Second cancer", "x", "x", "x"),
        ],
    )
    table = load_reference(path, SITE_ALIASES, NAME_ALIASES)
    assert list(table.columns) == ["site", "side_effect", "onset", "frequency"]
    assert not table.duplicated(["site", "side_effect"]).any()
    assert _row(table, "APBI", "skin redness") == ("short", "common")
    assert _row(table, "Chest Wall", "peeling") == ("short", "uncommon")
    assert _row(table, "Breast Only", "peeling") is None
    assert _row(table, "Chest Wall", "decreased blood cell count") == ("short", "uncommon")
    assert _row(table, "Breast Only", "breast shrinkage") == ("long", "common")
    assert _row(table, "APBI", "breast shrinkage") == ("long", "uncommon")
    assert vocabulary(table) == [
        "breast shrinkage",
        "decreased blood cell count",
        "peeling",
        "second cancer",
        "skin redness",
    ]
    assert len(table) == 3 + 2 + 1 + 2 + 3


def test_tidy_tsv_gives_the_same_table_as_the_spreadsheet(tmp_path):
    sheet = _write_xlsx(
        tmp_path / "ref.xlsx",
        [
            HEADER,
            ("Short term-common", "Fatigue", "x", None, "x"),
            ("Long term - rare", "Rib fracture", None, "x", None),
        ],
    )
    tidy = tmp_path / "ref.tsv"
    tidy.write_text(
        "site\tside_effect\tonset\tfrequency\n"
        "Accelerated partial breast irradiation (APBI)\tFatigue\tshort\tcommon\n"
        "Breast Only\tfatigue\tShort term\tCommon\n"
        "Chest Wall\tRib fracture\tlong\trare\n"
    )
    a = load_reference(sheet, SITE_ALIASES, NAME_ALIASES)
    b = load_reference(tidy, SITE_ALIASES, NAME_ALIASES)
    assert a.equals(b)


def test_a_side_effect_with_two_frequencies_at_one_site_stops_the_load(tmp_path):
    path = _write_xlsx(
        tmp_path / "conflict.xlsx",
        [
            HEADER,
            ("Short term-common", "Fatigue", "x", None, None),
            ("Short term - rare", "fatigue", "x", None, None),
        ],
    )
    with pytest.raises(InputError, match=r"row 3.*'fatigue' at site 'APBI'"):
        load_reference(path, SITE_ALIASES, NAME_ALIASES)


def test_an_unreadable_label_names_the_row(tmp_path):
    path = _write_xlsx(tmp_path / "bad.xlsx", [HEADER, ("Sometimes", "Fatigue", "x", None, None)])
    with pytest.raises(InputError, match=r"row 2.*'Sometimes'"):
        load_reference(path, SITE_ALIASES, NAME_ALIASES)


@pytest.mark.skipif(not PUBLISHED.exists(), reason="published reference not available here")
def test_published_reference_loads_into_the_tidy_table():
    table = load_reference(PUBLISHED, SITE_ALIASES, NAME_ALIASES)
    assert sorted(table.site.unique()) == sorted(SITES)
    assert not table.duplicated(["site", "side_effect"]).any()
    vocab = vocabulary(table)
    assert len(vocab) == 31  # Appendix A lists 31 side effects
    assert "decreased blood cell count" in vocab and "decreasd blood cell count" not in vocab
    # one name under two frequencies, per site
    assert _row(table, "APBI", "breast shrinkage") == ("long", "uncommon")
    assert _row(table, "Breast Only", "breast shrinkage") == ("long", "common")
    assert _row(table, "APBI", "telangiectasia") == ("long", "common")
    assert _row(table, "Breast and Nodes", "telangiectasia") == ("long", "uncommon")
    # listed under 'common' with no site marked, then under 'uncommon' for every site
    assert {_row(table, s, "skin blistering or peeling") for s in SITES} == {("short", "uncommon")}
    sizes = table.groupby("site").size()
    assert sizes.between(20, 30).all()  # the paper's 20-30 per profile


@pytest.mark.skipif(
    not (PUBLISHED.exists() and PAPER.exists()), reason="published reference or paper not available"
)
def test_grounded_prompt_with_published_vocabulary_is_appendix_a3_verbatim():
    text = PAPER.read_text(encoding="utf-8")
    start = text.index("A.3 Selection from a Predefined Side-Effect List\n")
    end = text.index("A.4 Selection from a Predefined List")
    appendix = text[start:end].split("\n", 1)[1].strip("\n")
    vocab = vocabulary(load_reference(PUBLISHED, SITE_ALIASES, NAME_ALIASES))
    template = (REPO / "config/prompts/side_effects/grounded.txt").read_text().rstrip("\n")
    rendered = render(template, "{{PATIENT_PROFILE}}", vocab, (20, 30))
    assert rendered == appendix
