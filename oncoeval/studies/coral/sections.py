"""Find the HPI and Assessment & Plan spans of a note.

Two sources, chosen in the config (``sections.source``):

- ``entities``: marker entities of configured types (``sections.marker_types``, e.g.
  ``{hpi: HistoryOfPresentIllness}``) span the section; several markers of one type give the
  span from the first start to the last end.
- ``headings``: a section starts after the first line matching its heading pattern
  (``sections.headings``) and ends where the next heading line (``sections.heading_any``) starts,
  or at the end of the note.

A note where a section is not found gets no span for it; the prepare step lists such notes in
its section report rather than stopping, since a missing section is a fact about the note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .brat import Document

DEFAULT_HEADINGS = {
    "hpi": r"(?im)^[ \t]*(history of present illness|hpi|interval history)[ \t]*:?[ \t]*$",
    "ap": r"(?im)^[ \t]*(assessment and plan|assessment & plan|a&p|impression and plan)[ \t]*:?[ \t]*$",
}
DEFAULT_MARKERS = {"hpi": "HistoryOfPresentIllness", "ap": "AssessmentAndPlan"}
DEFAULT_HEADING_ANY = r"(?m)^[ \t]*[A-Z][A-Z0-9 &/()'-]{1,80}:[ \t]*$"


@dataclass(frozen=True)
class Section:
    name: str
    start: int
    end: int
    text: str


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


def find_sections(doc: Document, settings: dict) -> dict[str, Section]:
    """Sections named in ``settings['names']`` that the configured source finds in ``doc``."""
    names = list(settings.get("names") or ["hpi", "ap"])
    source = settings.get("source", "headings")
    if source == "entities":
        marker_types = {**DEFAULT_MARKERS, **(settings.get("marker_types") or {})}
        found = sections_from_entities(doc, {n: marker_types[n] for n in names})
    elif source == "headings":
        headings = {**DEFAULT_HEADINGS, **(settings.get("headings") or {})}
        found = sections_from_headings(
            doc,
            {n: headings[n] for n in names},
            settings.get("heading_any") or DEFAULT_HEADING_ANY,
        )
    else:
        raise ValueError(f"sections.source must be 'entities' or 'headings', not {source!r}")
    return found


def entities_in(doc: Document, section: Section):
    """Entities whose every fragment lies inside the section."""
    return [
        e
        for e in doc.entities.values()
        if all(section.start <= s and e_ <= section.end for s, e_ in e.spans)
    ]
