"""A run's judged Cancer-Myth answers, written small: what `make review` reads."""

import json
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Verdicts of the 120 judged answers: 72 of score 1, 30 of 0, 18 of -1.
VERDICTS = [1] * 72 + [0] * 30 + [-1] * 18
# Text the page must show as text: markup, a script end tag, quotes and a line separator.
TRICKY = '</script><script>window.pwned=1</script> <b>bold?</b> & "quoted" \u2028 end'


def judged_root(tmp_path: Path, n: int = len(VERDICTS)) -> Path:
    """A folder with the repository's config and results/cancer_myth/judged/smollm2.jsonl (the
    demo config's one model judged by the study verifier)."""
    root = tmp_path / "run"
    (root / "config").mkdir(parents=True)
    shutil.copy(REPO / "config" / "config.yaml", root / "config" / "config.yaml")
    judged = root / "results" / "cancer_myth" / "judged" / "smollm2.jsonl"
    judged.parent.mkdir(parents=True)
    records = [
        {
            "question_id": f"q{i}",
            "cluster": f"myth:{i}",
            "category": "other",
            "from_model": "manual",
            "question": f"Question {i}?",
            "correction": f"Correction {i}. {TRICKY}",
            "verifier": "smollm2",
            "answer": f"Answer {i}.",
            "score": VERDICTS[i],
            "reason": "r",
            "parse_error": "",
        }
        for i in range(n)
    ]
    judged.write_text("".join(json.dumps(r) + "\n" for r in records))
    return root
