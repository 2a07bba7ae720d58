"""Find the HPI and Assessment & Plan spans of a note.

Three sources, chosen in the config (``sections.source``):

- ``markers`` (the released corpus, and the public code's reading of it): entities of a start and
  an end type per section (``sections.marker_pairs``, default ``hpi: [hpi_start, hpi_end]`` and
  ``ap: [ap_start, ap_end]``; these types are not in ``annotation.conf``). A note may hold several
  pairs per section: the starts sorted by offset pair with the ends sorted by offset, each pair
  spans ``[start marker's start, end marker's end + 1)`` (the public code's span, which takes the
  character after the end marker), and the section text is the spans' texts joined with no
  separator. Starts and ends that do not pair up (different counts, an end before its start,
  overlapping pairs) stop the run with the file and the marker's line.
- ``entities``: marker entities of configured types (``sections.marker_types``, e.g.
  ``{hpi: HistoryOfPresentIllness}``) span the section; several markers of one type give the
  span from the first start to the last end.
- ``headings``: a section starts after the first line matching its heading pattern
  (``sections.headings``) and ends where the next heading line (``sections.heading_any``) starts,
  or at the end of the note.

A note where a section is not found gets no span for it; the prepare step lists such notes in
its section report rather than stopping, since a missing section is a fact about the note.

``SectionSkip`` regions (parts the annotators were told to leave unannotated, such as a copied
physical exam) stay inside a section's text and its gold, as in the public code (whose removal
step is never called); the section report counts their characters per section (``skip_chars``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...core.errors import InputError
from .brat import Document

DEFAULT_HEADINGS = {
    "hpi": r"(?im)^[ \t]*(history of present illness|hpi|interval history)[ \t]*:?[ \t]*$",
    "ap": r"(?im)^[ \t]*(assessment and plan|assessment & plan|a&p|impression and plan)[ \t]*:?[ \t]*$",
}
DEFAULT_HEADING_ANY = r"(?m)^[ \t]*[A-Z][A-Z0-9 &/()'-]{1,80}:[ \t]*$"


@dataclass(frozen=True)
class Section:
    name: str
    start: int
    end: int
    text: str
    spans: tuple[tuple[int, int], ...] = ()  # several for marker pairs; else (start, end)

    @property
    def parts(self) -> tuple[tuple[int, int], ...]:
        return self.spans or ((self.start, self.end),)


def _trimmed(doc: Document, name: str, start: int, end: int) -> Section | None:
    raw = doc.text[start:end]
    lead = len(raw) - len(raw.lstrip())
    body = raw.strip()
    if not body:
        return None
    return Section(name, start + lead, start + lead + len(body), body)


def sections_from_entities(doc: Document, marker_types: dict[str, str]) -> dict[str, Section]:
    found = {}
    for name, etype in marker_types.items():
        markers = [e for e in doc.entities.values() if e.type == etype]
        if markers:
            section = _trimmed(
                doc, name, min(e.start for e in markers), max(e.end for e in markers)
            )
            if section is not None:
                found[name] = section
    return found


def sections_from_markers(doc: Document, pairs: dict[str, list[str]]) -> dict[str, Section]:
    found = {}
    for name, (start_type, end_type) in pairs.items():
        starts = sorted((e for e in doc.entities.values() if e.type == start_type), key=_at)
        ends = sorted((e for e in doc.entities.values() if e.type == end_type), key=_at)
        if not starts and not ends:
            continue
        if len(starts) != len(ends):
            extra = (starts if len(starts) > len(ends) else ends)[min(len(starts), len(ends))]
            raise InputError(
                doc.ann_path,
                f"line {extra.line}",
                f"section {name}: {len(starts)} {start_type} and {len(ends)} {end_type} markers "
                f"do not pair up ({extra.id} {extra.type} at {extra.start} has no partner)",
            )
        spans = []
        for begin, stop in zip(starts, ends, strict=True):
            span = (begin.start, min(stop.end + 1, len(doc.text)))
            if begin.start > stop.start or (spans and span[0] < spans[-1][1]):
                raise InputError(
                    doc.ann_path,
                    f"line {stop.line}",
                    f"section {name}: {stop.id} {stop.type} at {stop.start} does not close "
                    f"{begin.id} {begin.type} at {begin.start} (an end before its start, or "
                    "overlapping pairs)",
                )
            spans.append(span)
        text = "".join(doc.text[a:b] for a, b in spans)
        found[name] = Section(name, spans[0][0], spans[-1][1], text, tuple(spans))
    return found


def _at(e):
    return (e.start, e.end, e.line)


def sections_from_headings(
    doc: Document, headings: dict[str, str], heading_any: str = DEFAULT_HEADING_ANY
) -> dict[str, Section]:
    any_heading = re.compile(heading_any)
    found = {}
    for name, pattern in headings.items():
        match = re.search(pattern, doc.text)
        if not match:
            continue
        start = match.end()
        nxt = any_heading.search(doc.text, start)
        end = nxt.start() if nxt else len(doc.text)
        section = _trimmed(doc, name, start, end)
        if section is not None:
            found[name] = section
    return found


def _per_name(settings: dict, key: str) -> dict:
    """``settings[key]`` for each of ``settings['names']``; a name it lacks stops the run."""
    given = settings[key]
    missing = [n for n in settings["names"] if n not in given]
    if missing:
        raise ValueError(
            f"studies.coral.sections.{key} has no entry for {missing} "
            f"(sections.names: {settings['names']})"
        )
    return {n: given[n] for n in settings["names"]}


def find_sections(doc: Document, settings: dict) -> dict[str, Section]:
    """Sections named in ``settings['names']`` that the configured source finds in ``doc``.

    ``settings``: the filled ``sections`` block of the study's config.
    """
    names = settings["names"]
    source = settings["source"]
    if source == "markers":
        found = sections_from_markers(doc, _per_name(settings, "marker_pairs"))
    elif source == "entities":
        found = sections_from_entities(doc, _per_name(settings, "marker_types"))
    elif source == "headings":
        headings = {**DEFAULT_HEADINGS, **settings["headings"]}
        found = sections_from_headings(
            doc,
            {n: headings[n] for n in names},
            settings["heading_any"] or DEFAULT_HEADING_ANY,
        )
    else:
        raise ValueError(
            f"sections.source must be 'markers', 'entities' or 'headings', not {source!r}"
        )
    return found


def marker_types(settings: dict) -> frozenset[str]:
    """Entity types the chosen source reads that ``annotation.conf`` need not declare."""
    if settings["source"] != "markers":
        return frozenset()
    return frozenset(t for pair in _per_name(settings, "marker_pairs").values() for t in pair)


def entities_in(doc: Document, section: Section):
    """Entities that lie fully inside one span of the section (first start to last end)."""
    return [
        e
        for e in doc.entities.values()
        if any(a <= e.start and e.end <= b for a, b in section.parts)
    ]


def skip_chars(doc: Document, section: Section) -> int:
    """Characters of ``SectionSkip`` regions inside the section's spans."""
    total = 0
    for e in doc.entities.values():
        if e.type == "SectionSkip":
            for a, b in section.parts:
                total += max(0, min(b, e.end) - max(a, e.start))
    return total
