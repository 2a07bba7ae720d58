"""The side-effect matcher validated as a judge of `same`: hand-computed on a tiny set."""

import pandas as pd
import pytest

from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.studies.side_effects import validation
from oncoeval.studies.side_effects.matchers import MatchResult

SETTINGS = BootstrapSettings(n_resamples=200, seed=0)
TINY = (
    "prediction\treference\tsame\tkind\n"
    "fatigue\tfatigue\tyes\tterm\n"
    "skin redness\tskin redness\tyes\tterm\n"
    "nausea\tnausea\tyes\tterm\n"
    "tiredness\tfatigue\tyes\tlay\n"  # synonym: paired (yes/yes)
    "erythema\tskin redness\tyes\tlay\n"  # synonym: paired (yes/yes)
    "feeling sick\tnausea\tyes\tlay\n"  # not in the synonyms: missed (yes/no)
    "radiation dermatitis\tskin redness\tno\tnegative\n"  # synonym pairs it anyway (no/yes)
    "hair loss\tnausea\tno\tnegative\n"  # not paired (no/no)
)
SYNONYMS = (
    "alias\tcanonical\ntiredness\tfatigue\nerythema\tskin redness\n"
    "radiation dermatitis\tskin redness\n"
)


def _files(tmp_path):
    (tmp_path / "v.tsv").write_text(TINY)
    (tmp_path / "s.tsv").write_text(SYNONYMS)
    return tmp_path / "v.tsv", tmp_path / "s.tsv"


def _lexical_agreement(tmp_path, validation_file, synonyms_file):
    """The lexical matcher's judge tables (summary, confusion, per class: (tsv, md) each) and
    the candidate table, written under ``tmp_path``."""
    out = {
        k: (tmp_path / f"judge_{k}.tsv", tmp_path / f"judge_{k}.md")
        for k in ("summary", "confusion", "per_class")
    }
    candidates = validation.write_agreement(
        {"validation": validation_file, "synonyms": synonyms_file},
        ["lexical"],
        {"method": "lexical", "threshold": 0.5},
        tmp_path / "m.tsv",
        tmp_path / "m.md",
        SETTINGS,
        judge_out=out,
    )
    return out, candidates


def test_lexical_matcher_as_a_judge_by_hand(tmp_path):
    val, syn = _files(tmp_path)
    out, candidates = _lexical_agreement(tmp_path, val, syn)
    # human yes: 6 rows, 5 paired; human no: 2 rows, 1 paired
    confusion = pd.read_csv(out["confusion"][0], sep="\t").set_index("human")
    assert confusion["judge"].unique().tolist() == ["lexical"]
    assert confusion.loc["yes", ["judge_yes", "judge_no", "judge_unscored"]].tolist() == [5, 1, 0]
    assert confusion.loc["no", ["judge_yes", "judge_no", "judge_unscored"]].tolist() == [1, 1, 0]
    per_class = pd.read_csv(out["per_class"][0], sep="\t").set_index("class")
    assert per_class.loc["yes", "sensitivity"] == pytest.approx(5 / 6)
    assert per_class.loc["yes", "specificity"] == pytest.approx(1 / 2)
    assert per_class.loc["no", "sensitivity"] == pytest.approx(1 / 2)
    summary = pd.read_csv(out["summary"][0], sep="\t").iloc[0]
    # p_o = 6/8; both sides 6 yes / 2 no, so p_e = (6*6 + 2*2) / 64 = 40/64
    # kappa = (0.75 - 0.625) / (1 - 0.625) = 1/3
    assert (summary.judge, summary.n, summary.n_unscored) == ("lexical", 8, 0)
    assert summary.exact_agreement == pytest.approx(0.75)
    assert summary.cohen_kappa == pytest.approx(1 / 3)
    assert summary.cohen_kappa_ci_low <= 1 / 3 <= summary.cohen_kappa_ci_high
    # the same decisions as the candidate table's agreement
    assert candidates.set_index("matcher").loc["lexical", "agreement"] == pytest.approx(0.75)
    assert out["per_class"][1].read_text().startswith("# Side-effect matcher as a judge")


def test_an_unreadable_judge_answer_is_unscored_on_every_row_of_its_wording(tmp_path):
    val, _ = _files(tmp_path)
    df = validation.read_validation(val)
    tasks = validation.tasks(df)
    results = {
        t.key: MatchResult([(0, t.right.index(t.left[0]))]) for t in tasks if t.left[0] in t.right
    }
    results |= {t.key: MatchResult([]) for t in tasks if t.key not in results}
    garbled = next(t.key for t in tasks if t.left == ["hair loss"])
    results[garbled] = MatchResult([], "unparseable", "no pairs read")
    truth, judged = validation.judge_labels(df, tasks, results)
    assert truth == ["yes"] * 6 + ["no"] * 2
    # identical strings paired, everything else not; hair loss unreadable
    assert judged == ["yes", "yes", "yes", "no", "no", "no", "no", None]


def test_reviewed_rows_weigh_one_over_their_inclusion_probability(tmp_path):
    """The lexical matcher on TINY with a review plan's inclusion probabilities on the wordings
    (the term rows have none: weight 1). Weighted table (rows human, columns matcher):
    yes [[3 + 2 + 2, 4], no [2, 4]] against the unweighted [[5, 1], [1, 1]]."""
    probability = {
        "tiredness": "0.5",  # yes/yes, weight 2
        "erythema": "0.5",  # yes/yes, weight 2
        "feeling sick": "0.25",  # yes/no, weight 4
        "radiation dermatitis": "0.5",  # no/yes, weight 2
        "hair loss": "0.25",  # no/no, weight 4
    }
    lines = TINY.splitlines()
    lines = [lines[0] + "\tinclusion_probability"] + [
        f"{line}\t{probability.get(line.split(chr(9))[0], '')}" for line in lines[1:]
    ]
    (tmp_path / "v.tsv").write_text("\n".join(lines) + "\n")
    (tmp_path / "s.tsv").write_text(SYNONYMS)
    out, candidates = _lexical_agreement(tmp_path, tmp_path / "v.tsv", tmp_path / "s.tsv")
    confusion = pd.read_csv(out["confusion"][0], sep="\t").set_index("human")
    assert confusion.loc["yes", ["judge_yes", "judge_no", "n_labels"]].tolist() == [7, 4, 6]
    assert confusion.loc["no", ["judge_yes", "judge_no", "n_labels"]].tolist() == [2, 4, 2]
    per_class = pd.read_csv(out["per_class"][0], sep="\t").set_index("class")
    yes = per_class.loc["yes"]
    assert yes.sensitivity == pytest.approx(7 / 11)  # unweighted 5 / 6
    assert yes.specificity == pytest.approx(4 / 6)  # unweighted 1 / 2
    assert yes.sensitivity_ci_low <= 7 / 11 <= yes.sensitivity_ci_high
    assert (yes.n_class, yes.n_other) == (6, 2)
    summary = pd.read_csv(out["summary"][0], sep="\t").iloc[0]
    # p_o = 11/17; margins human (11, 6), matcher (9, 8): p_e = 147/289; kappa = 40/142
    assert summary.exact_agreement == pytest.approx(11 / 17)  # unweighted 0.75
    assert summary.cohen_kappa == pytest.approx(40 / 142)
    assert summary.cohen_kappa_ci_low <= 40 / 142 <= summary.cohen_kappa_ci_high
    assert summary.weights == "1/inclusion_probability (5 labels; 3 without one weigh 1)"
    assert "1 / its inclusion probability" in out["summary"][1].read_text()
    # the candidate table's agreement is weighted alike; its pair counts are not
    lexical = candidates.set_index("matcher").loc["lexical"]
    assert lexical.agreement == pytest.approx(11 / 17)
    assert lexical.agreement_ci_low <= 11 / 17 <= lexical.agreement_ci_high
    assert (lexical.tp, lexical.fp, lexical.fn) == (2, 1, 1)
    assert "agreement weighs each row by 1 / its inclusion" in (tmp_path / "m.md").read_text()


def test_an_inclusion_probability_off_its_range_is_refused_naming_the_row(tmp_path):
    from oncoeval.core.errors import InputError

    lines = TINY.splitlines()
    lines = [lines[0] + "\tinclusion_probability"] + [f"{line}\t" for line in lines[1:]]
    lines[4] = lines[4] + "1.5"
    (tmp_path / "v.tsv").write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"row 5 .*inclusion_probability must be in \(0, 1\]"):
        validation.read_validation(tmp_path / "v.tsv")
