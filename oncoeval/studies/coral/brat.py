"""BRAT standoff reader (``.txt`` + ``.ann``) and ``annotation.conf`` schema, with validation.

Handled ``.ann`` lines:

- ``T``: entities, ``T3<TAB>Symptom 26 30<TAB>lump``; discontinuous spans ``s1 e1;s2 e2`` whose
  text is the fragments joined by one space (BRAT's convention). The text must equal the note at
  the offsets.
- ``R``: binary relations, ``R1<TAB>SiteOf Arg1:T4 Arg2:T9``; role names vary, so the first
  argument is ``arg1`` and the second ``arg2`` whatever they are called.
- ``A`` (and legacy ``M``): attributes, ``A2<TAB>NegationModalityVal T16 negated``; a binary
  attribute without value gets the value ``"true"``.
- ``*``: equivalences, ``*<TAB>Equiv T1 T2``; kept as groups of entity ids.
- ``E`` (events) and ``#`` (notes) are ignored.

Pre-annotations (entity types containing ``PROBLEM``, ``TREATMENT``, ``TEST`` or
``SectionAnnotate``, which the released corpus carries as a guide for annotators and
``annotation.conf`` does not declare) are skipped as the public code skips them, with the
relations and attributes that point at them; :attr:`Document.skipped` counts them per type.
A BEL character (``\x07``) in the note reads as a space, as in the public code. Entity types
outside ``annotation.conf`` are accepted only when the caller names them (``extra_entity_types``:
the section markers of the chosen section source).

Any other unknown type, attribute value, malformed line, offset mismatch, or reference to a
missing entity raises :class:`~oncoeval.core.errors.InputError` naming the file and line.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import InputError
from ...core.inputs import check_length, decode_utf8, read_text


@dataclass(frozen=True)
class Schema:
    entities: frozenset[str]
    relations: frozenset[str]
    attributes: dict[str, frozenset[str]]  # name -> allowed values (empty: binary attribute)


@dataclass
class Entity:
    id: str
    type: str
    spans: list[tuple[int, int]]
    text: str
    attributes: dict[str, str] = field(default_factory=dict)
    line: int = 0  # line of the .ann file, for error messages

    @property
    def start(self) -> int:
        return min(s for s, _ in self.spans)

    @property
    def end(self) -> int:
        return max(e for _, e in self.spans)


@dataclass(frozen=True)
class Relation:
    id: str
    type: str
    arg1: str
    arg2: str


@dataclass
class Document:
    doc_id: str
    text: str
    entities: dict[str, Entity]
    relations: list[Relation]
    equivalences: list[list[str]]
    ann_path: str = ""
    skipped: Counter = field(default_factory=Counter)  # pre-annotation type -> lines skipped


# Substrings of the pre-annotation types (the public reader's test, case as written).
PRE_ANNOTATION_MARKS = ("PROBLEM", "TREATMENT", "TEST", "SectionAnnotate")


def is_pre_annotation(entity_type: str) -> bool:
    return any(mark in entity_type for mark in PRE_ANNOTATION_MARKS)


def read_schema(path: str | Path) -> Schema:
    """Parse a BRAT ``annotation.conf``: entity, relation and attribute names (and values)."""
    entities: set[str] = set()
    relations: set[str] = set()
    attributes: dict[str, frozenset[str]] = {}
    section = None
    for lineno, raw in enumerate(read_text(path, "BRAT schema").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            continue
        name, _, rest = line.partition("\t") if "\t" in line else line.partition(" ")
        name, rest = name.strip(), rest.strip()
        if section == "entities":
            if not name.startswith("!"):
                entities.add(name)
        elif section == "relations":
            if not name.startswith("<"):
                relations.add(name)
        elif section == "attributes":
            values = frozenset()
            match = re.search(r"Value:([^,\s]+)", rest)
            if match:
                values = frozenset(match.group(1).split("|"))
            attributes[name] = values
        elif section == "events":
            continue
        else:
            raise InputError(path, f"line {lineno}", f"entry {name!r} outside a known section")
    return Schema(frozenset(entities), frozenset(relations), attributes)


def _utf8_as_is(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        decode_utf8(data, path)  # raises InputError naming the line
        raise


def _parse_spans(spec: str) -> list[tuple[int, int]]:
    spans = []
    for frag in spec.split(";"):
        start, end = frag.split()
        spans.append((int(start), int(end)))
    return spans


def read_document(
    txt_path: str | Path,
    ann_path: str | Path,
    schema: Schema,
    extra_entity_types: frozenset[str] | set[str] = frozenset(),
) -> Document:
    """Read one BRAT pair and validate it against ``schema`` (plus ``extra_entity_types``)."""
    txt_path, ann_path = Path(txt_path), Path(ann_path)
    # Decoded as it is (\r\n stays two characters, a BOM one), as BRAT counts offsets on the
    # raw file; bytes that are not UTF-8 are named with their line.
    text = _utf8_as_is(txt_path).replace("\x07", " ")
    check_length(txt_path, "the note", text, "document")
    reader = _AnnotationReader(ann_path, text, schema, extra_entity_types)
    for lineno, line in enumerate(_utf8_as_is(ann_path).splitlines(), start=1):
        reader.read_line(lineno, line)
    return reader.document()


class _AnnotationReader:
    """One .ann file, read line by line against the schema; references between annotations
    (relations, attributes, equivalences) are checked once every entity is known."""

    def __init__(self, ann_path: Path, text: str, schema: Schema, extra_entity_types):
        self.ann_path, self.text = ann_path, text
        self.schema, self.extra_entity_types = schema, extra_entity_types
        self.skipped: Counter = Counter()
        self.skipped_ids: set[str] = set()
        self.entities: dict[str, Entity] = {}
        self.relations: list[Relation] = []
        self.equivalences: list[list[str]] = []
        self.pending_attrs: list[tuple[int, str, str, str]] = []
        self.pending_equivs: list[tuple[int, list[str]]] = []
        self.rel_lines: dict[str, int] = {}

    def fail(self, lineno, problem):
        raise InputError(self.ann_path, f"line {lineno}", problem)

    def read_line(self, lineno: int, line: str) -> None:
        if not line.strip():
            return
        kind = line[0]
        if kind in "E#":
            return
        parts = line.split("\t")
        if kind == "T":
            self.entity(lineno, parts)
        elif kind == "R":
            self.relation(lineno, parts)
        elif kind in "AM":
            self.attribute(lineno, parts)
        elif kind == "*":
            fields = parts[1].split() if len(parts) > 1 else []
            if len(fields) < 3:
                self.fail(lineno, "equivalence line needs a type and at least two entity ids")
            self.pending_equivs.append((lineno, fields[1:]))
        else:
            self.fail(lineno, f"unknown annotation line type {kind!r}")

    def entity(self, lineno: int, parts: list[str]) -> None:
        fail, text = self.fail, self.text
        if len(parts) < 3:
            fail(lineno, "entity line needs id, 'Type start end' and text separated by tabs")
        ent_id, spec, ent_text = parts[0], parts[1], "\t".join(parts[2:])
        try:
            etype, span_spec = spec.split(" ", 1)
            spans = _parse_spans(span_spec)
        except ValueError:
            fail(lineno, f"cannot read type and offsets from {spec!r}")
        if etype not in self.schema.entities and etype not in self.extra_entity_types:
            if is_pre_annotation(etype):
                self.skipped[etype] += 1
                self.skipped_ids.add(ent_id)
                return
            hint = "not in annotation.conf"
            if etype.endswith(("_start", "_end")):
                hint += " nor a section marker of the chosen sections.source"
            fail(lineno, f"unknown entity type {etype!r} ({hint})")
        for start, end in spans:
            if not 0 <= start <= end <= len(text):
                fail(lineno, f"offsets {start}-{end} outside the text ({len(text)} chars)")
        expected = " ".join(text[s:e] for s, e in spans)
        ent_text = ent_text.replace("\x07", " ")
        if expected != ent_text:
            fail(
                lineno,
                f"{ent_id} text {ent_text!r} differs from the note at {span_spec}: {expected!r}",
            )
        if ent_id in self.entities:
            fail(lineno, f"duplicate entity id {ent_id}")
        self.entities[ent_id] = Entity(ent_id, etype, spans, ent_text, line=lineno)

    def relation(self, lineno: int, parts: list[str]) -> None:
        if len(parts) < 2:
            self.fail(lineno, "relation line needs an id and 'Type Arg1:T1 Arg2:T2'")
        fields = parts[1].split()
        if len(fields) != 3 or any(":" not in f for f in fields[1:]):
            self.fail(lineno, f"cannot read relation {parts[1]!r}")
        rtype = fields[0]
        if rtype not in self.schema.relations:
            self.fail(lineno, f"unknown relation type {rtype!r} (not in annotation.conf)")
        args = [f.split(":", 1)[1] for f in fields[1:]]
        if self.skipped_ids & set(args):
            self.skipped["relations to pre-annotations"] += 1
            return
        self.relations.append(Relation(parts[0], rtype, args[0], args[1]))
        self.rel_lines[parts[0]] = lineno

    def attribute(self, lineno: int, parts: list[str]) -> None:
        if len(parts) < 2:
            self.fail(lineno, "attribute line needs an id and 'Name Target [Value]'")
        fields = parts[1].split()
        if len(fields) not in (2, 3):
            self.fail(lineno, f"cannot read attribute {parts[1]!r}")
        name, target = fields[0], fields[1]
        value = fields[2] if len(fields) == 3 else "true"
        if name not in self.schema.attributes:
            self.fail(lineno, f"unknown attribute {name!r} (not in annotation.conf)")
        allowed = self.schema.attributes[name]
        if allowed and value not in allowed:
            self.fail(
                lineno, f"attribute {name} has no value {value!r}; allowed: {sorted(allowed)}"
            )
        self.pending_attrs.append((lineno, name, target, value))

    def document(self) -> Document:
        """The document, once every reference between its annotations is checked."""
        entities, fail = self.entities, self.fail
        for rel in self.relations:
            for arg in (rel.arg1, rel.arg2):
                if arg not in entities:
                    fail(
                        self.rel_lines[rel.id], f"relation {rel.id} refers to missing entity {arg}"
                    )
        for lineno, name, target, value in self.pending_attrs:
            if target in self.skipped_ids:
                self.skipped["attributes of pre-annotations"] += 1
                continue
            if target not in entities:
                fail(lineno, f"attribute {name} refers to missing entity {target}")
            entities[target].attributes[name] = value
        for lineno, ids in self.pending_equivs:
            ids = [i for i in ids if i not in self.skipped_ids]
            if len(ids) < 2:
                continue
            missing = [i for i in ids if i not in entities]
            if missing:
                fail(lineno, f"equivalence refers to missing entities {missing}")
            self.equivalences.append(ids)
        path = self.ann_path
        return Document(
            path.stem, self.text, entities, self.relations, self.equivalences, str(path),
            self.skipped,
        )  # fmt: skip


def find_documents(root: str | Path) -> list[tuple[Path, Path]]:
    """Every ``<doc>.txt`` with its ``<doc>.ann`` under ``root`` (recursively), sorted by path.

    A ``.txt`` without its ``.ann`` (or the reverse) stops the run: a silently skipped note would
    change every mean.
    """
    root = Path(root)
    if not root.is_dir():
        raise InputError(root, None, "notes folder does not exist")
    pairs = []
    txts = {p.with_suffix(""): p for p in root.rglob("*.txt")}
    anns = {p.with_suffix(""): p for p in root.rglob("*.ann")}
    for stem in sorted(set(txts) | set(anns)):
        if stem not in anns:
            raise InputError(txts[stem], None, "note has no .ann file beside it")
        if stem not in txts:
            raise InputError(anns[stem], None, "annotation file has no .txt beside it")
        pairs.append((txts[stem], anns[stem]))
    if not pairs:
        raise InputError(root, None, "no BRAT .txt/.ann pairs found")
    stems = [t.stem for t, _ in pairs]
    dupes = sorted({s for s in stems if stems.count(s) > 1})
    if dupes:
        raise InputError(root, None, f"document names must be unique across folders: {dupes}")
    return pairs
