"""Probe requests built from a study's items, and their controls.

- *completion* (guided completion, Golchin & Surdeanu 2023): the prompt names the dataset and
  gives the first half of an item's words verbatim; the model is asked for the exact rest.
- *slot* (slot guessing, Deng et al. 2023): one content word of the item is masked; the model
  is asked for it.
- *likelihood* (Min-K% Prob, Shi et al. 2023): the item's text itself, as a ``text_logprobs``
  request (oncoeval.core.records): the backend returns each token's log-probability, nothing is
  generated.

Each item's control is a perturbed copy of it (every other content word swapped for a content
word of another item, every number changed): text of the same kind and length that no model
can have read, probed the same way. The likelihood probe's control is instead the item's first
sentence followed by the other sentences of another item (drawn with the seed): a word-swapped
copy is far less fluent than any real text, so nearly every unseen item would beat its
likelihood (docs/exposure.md), while a spliced one is as fluent as an item but for one seam.
The item keeps its id as ``request_id``; its control is ``{id}~control``. ``meta`` carries what scoring needs (the true remainder or masked word).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

from ..core.records import Request

PROBES = ("completion", "slot", "likelihood")
CONTROL_SUFFIX = "~control"
MASK = "[MASK]"
# Fewest words an item needs for a completion probe (an opening and a remainder of two each).
MIN_WORDS = 4
_WORD = re.compile(r"\S+")
_CONTENT = re.compile(r"[A-Za-z][A-Za-z-]{3,}")
_NUMBER = re.compile(r"\d+")
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")
# Function words never masked or swapped: guessing them says nothing about the item.
STOPWORDS = frozenset(
    """about above after again against also been before being below between both cannot could
    does doing down during each from further have having here hers herself himself into itself
    just more most much must myself only other ought ours over same shall should some such than
    that their theirs them then there these they this those through under until very were what
    when where which while whom whose will with would your yours yourself""".split()
)


@dataclass(frozen=True)
class ProbeSettings:
    """What a probe request set depends on (the study's ``exposure`` block and dataset)."""

    dataset: str  # named in the prompt, as the model would know it
    kind: str  # what one item is ("question", "clinical note section")
    seed: int
    n_items: int | None  # None or 0: every item
    max_new_tokens: int


def split_opening(text: str) -> tuple[str, str] | None:
    """(opening, remainder): the text up to the end of its first half of words, verbatim, and
    the rest from the next word on; None below ``MIN_WORDS`` words."""
    words = list(_WORD.finditer(text))
    if len(words) < MIN_WORDS:
        return None
    k = len(words) // 2
    return text[: words[k - 1].end()], text[words[k].start() :]


def content_words(text: str) -> list[re.Match]:
    """Words a slot may hide or a swap may replace: alphabetic, four letters or more, no
    function word."""
    return [m for m in _CONTENT.finditer(text) if m.group().lower() not in STOPWORDS]


def mask_slot(text: str, rng: random.Random) -> tuple[str, str] | None:
    """(text with one content word replaced by ``MASK``, that word); None without one."""
    slots = content_words(text)
    if not slots:
        return None
    m = rng.choice(slots)
    return text[: m.start()] + MASK + text[m.end() :], m.group()


def _cased(word: str, like: str) -> str:
    return word.capitalize() if like[:1].isupper() else word.lower()


def perturb(text: str, rng: random.Random, pool: list[str]) -> str:
    """A copy of ``text`` no model can have read: every other content word (starting at a
    random one of the first two) replaced by a different word of ``pool``, and every number
    shifted by 1 to 9. Spacing and punctuation are kept."""
    out = _NUMBER.sub(lambda m: str(int(m.group()) + rng.randint(1, 9)), text)
    slots = content_words(out)
    start = rng.randint(0, 1)
    for m in reversed(slots[start::2]):
        choices = [w for w in pool if w != m.group().lower()]
        if choices:
            out = out[: m.start()] + _cased(rng.choice(choices), m.group()) + out[m.end() :]
    return out


def sentences(text: str) -> list[str]:
    """The text's sentences (split after ``.``, ``?`` or ``!`` and a space), stripped."""
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def splice(text: str, other: str) -> str | None:
    """``text``'s first sentence, then ``other``'s sentences after its first; None when either
    has a single sentence."""
    own, theirs = sentences(text), sentences(other)
    if len(own) < 2 or len(theirs) < 2:
        return None
    return " ".join([own[0], *theirs[1:]])


def word_pool(texts) -> list[str]:
    """The content words of all items, lower-cased, sorted (the swaps' vocabulary)."""
    return sorted({m.group().lower() for t in texts for m in content_words(t)})


def select_items(items: list[dict], n_items: int | None, seed: int) -> list[dict]:
    """``n_items`` of the items drawn with ``seed`` (in their file order), or all of them."""
    if not n_items or n_items >= len(items):
        return list(items)
    keep = set(random.Random(seed).sample(range(len(items)), n_items))
    return [it for i, it in enumerate(items) if i in keep]


def item_rng(seed: int, item_id: str, probe: str) -> random.Random:
    """One generator per item and probe, so an item's probe does not change with the others."""
    return random.Random(f"{seed}|{probe}|{item_id}")


def _probe_text(probe: str, text: str, rng: random.Random) -> tuple[str, str] | None:
    """(what the prompt shows, the truth the answer is scored against)."""
    if probe == "likelihood":
        return text, ""  # the text itself is scored; there is no answer to compare
    if probe == "completion":
        return split_opening(text)
    if probe == "slot":
        return mask_slot(text, rng)
    raise ValueError(f"unknown exposure probe {probe!r}; known: {PROBES}")


def read_template(prompts: str | Path, probe: str) -> str:
    return (Path(prompts) / f"{probe}.txt").read_text(encoding="utf-8")


def build_probes(
    items: list[dict], probe: str, template: str, settings: ProbeSettings
) -> tuple[list[Request], list[str]]:
    """The probe's requests (each item, then its control) and the ids of the items it cannot
    probe (too short, no content word). ``items``: ``{"item_id", "text"}`` in file order."""
    pool = word_pool(it["text"] for it in items)
    requests, skipped = [], []
    for it in select_items(items, settings.n_items, settings.seed):
        rng = item_rng(settings.seed, it["item_id"], probe)
        control = _control(probe, it, items, rng, pool)
        if control is None:
            skipped.append(it["item_id"])
            continue
        shown = _probe_text(probe, it["text"], rng)
        shown_control = _probe_text(probe, control, rng)
        if shown is None or shown_control is None:
            skipped.append(it["item_id"])
            continue
        for rid, (prompt, truth), is_control in (
            (it["item_id"], shown, False),
            (it["item_id"] + CONTROL_SUFFIX, shown_control, True),
        ):
            content = template.format(
                dataset=settings.dataset,
                kind=settings.kind,
                opening=prompt,
                masked=prompt,
                text=prompt,
            ).strip()
            requests.append(
                Request(
                    rid,
                    [{"role": "user", "content": content}],
                    _params(probe, settings),
                    {
                        "item_id": it["item_id"],
                        "probe": probe,
                        "control": is_control,
                        "truth": truth,
                    },
                )
            )
    return requests, skipped


def _control(probe: str, item: dict, items: list[dict], rng: random.Random, pool) -> str | None:
    """The item's control text: spliced with another item for the likelihood probe (None when
    the item or every other item has one sentence), else a word-swapped copy."""
    if probe != "likelihood":
        return perturb(item["text"], rng, pool)
    others = [it["text"] for it in items if it["item_id"] != item["item_id"]]
    others = [t for t in others if len(sentences(t)) > 1]
    return splice(item["text"], rng.choice(others)) if others else None


def _params(probe: str, settings: ProbeSettings) -> dict:
    if probe == "likelihood":  # score the text, generate nothing
        return {"temperature": 0.0, "max_new_tokens": 1, "text_logprobs": True}
    return {"temperature": 0.0, "max_new_tokens": settings.max_new_tokens}
