"""Parsing and validation of uploaded campaign data (no database access).

Three forms are read into one :class:`ParsedUpload`:

1. plain text, one segment per line: a source file, reference files, system files named
   ``<system>.txt`` or ``<system>.<run>.txt`` and an optional doc-id file;
2. one TSV or JSONL file with the columns doc_id, seg_id, source, reference(s), system, run,
   translation;
3. WMT's XML test-set format (``<dataset><collection><doc id><src><p><seg id>`` with ``<ref>`` and
   ``<hyp system=…>`` blocks), in one or several files.

Every problem is reported as an :class:`UploadProblem` naming the file and, where there is one, the
line. A UTF-8 byte-order mark is dropped and CRLF/CR line ends become LF without complaint. Files
must be UTF-8; the encoding an XML declaration names is ignored.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import models
from lxml import etree

from annotation.models import Document, Reference, Run, Segment, System

DEFAULT_RUN = "main"
MAX_PROBLEMS = 20

SYSTEM_FILE_RE = re.compile(r"^(?P<system>[^./\\]+)(?:\.(?P<run>[^./\\]+))?\.txt$")
REFERENCE_COLUMN_RE = re.compile(r"^ref(?:erence)?(?:[_-]?(?P<n>\d+))?$")
TABLE_COLUMNS = ("doc_id", "seg_id", "source", "system", "run", "translation")

FORM_PLAIN = "plain"
FORM_TABLE = "table"
FORM_XML = "xml"


@dataclass(frozen=True)
class UploadProblem:
    """One thing wrong with an upload. ``line`` is 1-based; ``None`` when it concerns a file."""

    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}, line {self.line}"
        return f"{where}: {self.message}"


class UploadError(Exception):
    """Raised with every problem found; nothing of the upload is stored."""

    def __init__(self, problems: Sequence[UploadProblem]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(str(p) for p in self.problems))


@dataclass(frozen=True)
class UploadFile:
    """An uploaded file: its name as the user gave it, its bytes, and its form field."""

    name: str
    content: bytes
    role: str = ""


@dataclass
class ParsedSegment:
    doc_id: str
    seg_id: str
    source: str
    references: list[str]
    line: int  # where it was first defined, for messages
    file: str


SegmentKey = tuple[str, str]


@dataclass
class ParsedOutput:
    """The translations of one (system, run): keyed by line position (plain text) or by
    (doc_id, seg_id) (table and XML)."""

    system: str
    run: str
    file: str
    by_position: list[str] | None = None
    by_key: dict[SegmentKey, tuple[str, int]] = field(default_factory=dict)
    lines: dict[SegmentKey, int] = field(default_factory=dict)


@dataclass
class ParsedUpload:
    form: str
    files: list[str]
    segments: list[ParsedSegment] | None  # None: the upload adds systems to existing segments
    reference_labels: list[str]
    outputs: list[ParsedOutput]


class _Collector:
    """Gathers problems, stopping early once there are enough to act on."""

    def __init__(self) -> None:
        self.problems: list[UploadProblem] = []

    def add(self, file: str, line: int | None, message: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(UploadProblem(file, line, message))

    def raise_if_any(self) -> None:
        if self.problems:
            raise UploadError(self.problems)


# --------------------------------------------------------------------------------------------
# Bytes to text


def _too_large(name: str, size: int, max_bytes: int) -> UploadError:
    return UploadError(
        [UploadProblem(name, None, f"the file is {size:,} bytes; the limit is {max_bytes:,} bytes")]
    )


def upload_file_read(upload: Any, *, max_bytes: int, role: str = "") -> UploadFile:
    """The name and bytes of an uploaded file (Django's ``UploadedFile``), refused before it
    is read into memory when it is over ``max_bytes``."""
    name = upload.name or ""
    if upload.size is not None and upload.size > max_bytes:
        raise _too_large(name, upload.size, max_bytes)
    return UploadFile(name=name, content=upload.read(), role=role)


def decode_text(upload: UploadFile, *, max_bytes: int) -> str:
    """UTF-8 text of a file with BOM dropped and line ends normalised to LF."""
    if len(upload.content) > max_bytes:
        raise _too_large(upload.name, len(upload.content), max_bytes)
    data = upload.content
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UploadError(
            [
                UploadProblem(
                    upload.name,
                    line,
                    f"not valid UTF-8 (byte 0x{data[exc.start]:02x}); save the file as UTF-8",
                )
            ]
        ) from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    nul = text.find("\x00")
    if nul >= 0:
        raise UploadError(
            [UploadProblem(upload.name, text.count("\n", 0, nul) + 1, "contains a NUL character")]
        )
    return text


def split_lines(text: str) -> list[str]:
    """Lines of a text file; a final newline does not make an extra empty line."""
    if text == "":
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


# --------------------------------------------------------------------------------------------
# Form detection


def detect_form(files: Sequence[UploadFile]) -> str:
    """Which of the three forms an upload is; mixed forms are an error."""
    if not files:
        raise UploadError([UploadProblem("upload", None, "no files were uploaded")])
    forms: dict[str, str] = {}
    for f in files:
        if f.role in {"source", "references", "systems", "doc_ids"}:
            forms[f.name] = FORM_PLAIN
        else:
            lower = f.name.lower()
            if lower.endswith((".tsv", ".jsonl", ".ndjson")):
                forms[f.name] = FORM_TABLE
            elif lower.endswith((".xml", ".sgm")):
                forms[f.name] = FORM_XML
            else:
                raise UploadError(
                    [
                        UploadProblem(
                            f.name,
                            None,
                            "unknown data file type; expected .tsv, .jsonl or .xml "
                            "(plain-text files go in the source, reference and system fields)",
                        )
                    ]
                )
    kinds = set(forms.values())
    if len(kinds) > 1:
        names = ", ".join(f"{name} ({kind})" for name, kind in forms.items())
        raise UploadError(
            [
                UploadProblem(
                    "upload",
                    None,
                    f"mixed forms in one upload: {names}; upload plain text, one TSV/JSONL file "
                    "or WMT XML, one form at a time",
                )
            ]
        )
    form = kinds.pop()
    if form == FORM_TABLE and len(files) > 1:
        raise UploadError([UploadProblem("upload", None, "upload one TSV or JSONL file at a time")])
    return form


def parse_upload(files: Sequence[UploadFile], *, max_bytes: int) -> ParsedUpload:
    """Parse and check an upload on its own (without looking at the campaign)."""
    form = detect_form(files)
    if form == FORM_PLAIN:
        parsed = parse_plain(files, max_bytes=max_bytes)
    elif form == FORM_TABLE:
        parsed = parse_table(files[0], max_bytes=max_bytes)
    else:
        parsed = parse_xml(files, max_bytes=max_bytes)
    _check_name_lengths(parsed)
    return parsed


def _max_length(model: type[models.Model], field_name: str) -> int:
    """The size of a model's CharField column: a longer value is reported as an upload problem
    instead of failing the INSERT."""
    length = model._meta.get_field(field_name).max_length
    assert length is not None, f"{model.__name__}.{field_name} has no max_length"
    return length


def _check_name_lengths(parsed: ParsedUpload) -> None:
    """Ids and names must fit their database columns (reference labels are checked where they
    are read, which knows their line)."""
    problems = _Collector()
    doc_max, seg_max = _max_length(Document, "external_id"), _max_length(Segment, "external_id")
    for seg in parsed.segments or []:
        for what, value, limit in (
            ("document id", seg.doc_id, doc_max),
            ("segment id", seg.seg_id, seg_max),
        ):
            if len(value) > limit:
                problems.add(seg.file, seg.line, f"{what} longer than {limit} characters")
    system_max, run_max = _max_length(System, "name"), _max_length(Run, "name")
    for out in parsed.outputs:
        for what, value, limit in (
            ("system name", out.system, system_max),
            ("run name", out.run, run_max),
        ):
            if len(value) > limit:
                problems.add(out.file, None, f"{what} longer than {limit} characters")
    problems.raise_if_any()


# --------------------------------------------------------------------------------------------
# Plain text


def system_run_from_filename(name: str) -> tuple[str, str | None]:
    """``nmt.txt`` → (nmt, None); ``nmt.opt0.txt`` → (nmt, opt0)."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    match = SYSTEM_FILE_RE.match(base)
    if not match:
        raise UploadError(
            [
                UploadProblem(
                    name,
                    None,
                    "unknown system/run: a system file must be named <system>.txt or "
                    "<system>.<run>.txt (for example nmt.txt or nmt.opt0.txt)",
                )
            ]
        )
    return match["system"], match["run"]


def parse_plain(files: Sequence[UploadFile], *, max_bytes: int) -> ParsedUpload:
    sources = [f for f in files if f.role == "source"]
    references = [f for f in files if f.role == "references"]
    systems = [f for f in files if f.role == "systems"]
    doc_files = [f for f in files if f.role == "doc_ids"]
    problems = _Collector()
    if len(sources) > 1 or len(doc_files) > 1:
        raise UploadError(
            [UploadProblem("upload", None, "give one source file and one doc-id file")]
        )
    if (references or doc_files) and not sources:
        raise UploadError(
            [UploadProblem("upload", None, "reference and doc-id files need a source file")]
        )
    if not sources and not systems:
        raise UploadError([UploadProblem("upload", None, "no source and no system files")])

    segments: list[ParsedSegment] | None = None
    reference_labels: list[str] = []
    n_lines: int | None = None
    source_name = sources[0].name if sources else ""
    if sources:
        src_lines = split_lines(decode_text(sources[0], max_bytes=max_bytes))
        if not src_lines:
            raise UploadError([UploadProblem(source_name, None, "the source file is empty")])
        n_lines = len(src_lines)
        for i, line in enumerate(src_lines, start=1):
            if not line.strip():
                problems.add(source_name, i, "empty source line")
        ref_lines: list[list[str]] = []
        label_max = _max_length(Reference, "label")
        for ref in references:
            if len(ref.name) > label_max:
                problems.add(
                    ref.name,
                    None,
                    f"reference label longer than {label_max} characters (a reference file's "
                    "name is its label; rename the file)",
                )
            lines = split_lines(decode_text(ref, max_bytes=max_bytes))
            _check_count(problems, ref.name, len(lines), n_lines, source_name)
            for i, line in enumerate(lines, start=1):
                if not line.strip():
                    problems.add(ref.name, i, "empty reference line")
            ref_lines.append(lines)
            reference_labels.append(ref.name)
        doc_ids = ["doc1"] * n_lines
        if doc_files:
            doc_name = doc_files[0].name
            doc_lines = split_lines(decode_text(doc_files[0], max_bytes=max_bytes))
            _check_count(problems, doc_name, len(doc_lines), n_lines, source_name)
            for i, line in enumerate(doc_lines, start=1):
                if not line.strip():
                    problems.add(doc_name, i, "empty document id")
            doc_ids = [line.strip() for line in doc_lines]
            _check_contiguous_documents(problems, doc_name, doc_ids)
        problems.raise_if_any()
        segments = []
        within: dict[str, int] = {}
        for i, line in enumerate(src_lines):
            doc = doc_ids[i]
            within[doc] = within.get(doc, 0) + 1
            segments.append(
                ParsedSegment(
                    doc_id=doc,
                    seg_id=str(within[doc]),
                    source=line.strip(),
                    references=[lines[i].strip() for lines in ref_lines],
                    line=i + 1,
                    file=source_name,
                )
            )

    outputs: list[ParsedOutput] = []
    seen: dict[tuple[str, str], str] = {}
    run_naming: dict[str, tuple[bool, str]] = {}
    for sys_file in systems:
        system, run = system_run_from_filename(sys_file.name)
        has_run = run is not None
        earlier = run_naming.get(system)
        if earlier is not None and earlier[0] != has_run:
            problems.add(
                sys_file.name,
                None,
                f"{earlier[1]} and {sys_file.name} name system {system!r} both with and without "
                "a run; name every file of a system <system>.<run>.txt",
            )
            continue
        run_naming[system] = (has_run, sys_file.name)
        run_name = run or DEFAULT_RUN
        key = (system, run_name)
        if key in seen:
            problems.add(
                sys_file.name,
                None,
                f"duplicate system/run {system}/{run_name}: also given by {seen[key]}",
            )
            continue
        seen[key] = sys_file.name
        lines = [line.strip() for line in split_lines(decode_text(sys_file, max_bytes=max_bytes))]
        if n_lines is not None:
            _check_count(problems, sys_file.name, len(lines), n_lines, source_name)
        outputs.append(ParsedOutput(system, run_name, sys_file.name, by_position=lines))
    problems.raise_if_any()
    return ParsedUpload(
        form=FORM_PLAIN,
        files=[f.name for f in files],
        segments=segments,
        reference_labels=reference_labels,
        outputs=outputs,
    )


def _check_count(problems: _Collector, name: str, count: int, expected: int, against: str) -> None:
    if count != expected:
        line = min(count, expected) + 1
        problems.add(
            name,
            line,
            f"line counts differ: {name} has {count} lines, {against} has {expected}",
        )


def _check_contiguous_documents(problems: _Collector, name: str, doc_ids: list[str]) -> None:
    closed: set[str] = set()
    previous = None
    for i, doc in enumerate(doc_ids, start=1):
        if doc != previous:
            if doc in closed:
                problems.add(
                    name,
                    i,
                    f"document {doc!r} starts again after other documents; the segments of a "
                    "document must be contiguous",
                )
                return
            if previous is not None:
                closed.add(previous)
            previous = doc


# --------------------------------------------------------------------------------------------
# TSV and JSONL


@dataclass
class _Row:
    line: int
    doc_id: str
    seg_id: str
    source: str
    references: list[str]
    system: str
    run: str
    translation: str


def parse_table(upload: UploadFile, *, max_bytes: int) -> ParsedUpload:
    text = decode_text(upload, max_bytes=max_bytes)
    if upload.name.lower().endswith(".tsv"):
        rows = list(_tsv_rows(upload.name, text))
    else:
        rows = list(_jsonl_rows(upload.name, text))
    if not rows:
        raise UploadError([UploadProblem(upload.name, None, "the file has no data rows")])
    return _rows_to_upload(upload.name, rows)


def _tsv_rows(name: str, text: str) -> Iterable[_Row]:
    lines = split_lines(text)
    if not lines:
        raise UploadError([UploadProblem(name, None, "the file is empty")])
    header = [h.strip().lower() for h in lines[0].split("\t")]
    ref_columns = _reference_columns(name, header)
    for required in ("doc_id", "seg_id", "source"):
        if required not in header:
            raise UploadError(
                [
                    UploadProblem(
                        name,
                        1,
                        f"malformed TSV: the header lacks the column {required!r} "
                        f"(columns: doc_id, seg_id, source, reference…, system, run, translation)",
                    )
                ]
            )
    unknown = [h for h in header if h not in TABLE_COLUMNS and h not in ref_columns]
    if unknown:
        raise UploadError([UploadProblem(name, 1, f"malformed TSV: unknown column {unknown[0]!r}")])
    if len(set(header)) != len(header):
        raise UploadError([UploadProblem(name, 1, "malformed TSV: a column is named twice")])
    if ("translation" in header) != ("system" in header):
        raise UploadError(
            [UploadProblem(name, 1, "malformed TSV: system and translation go together")]
        )
    index = {h: i for i, h in enumerate(header)}
    ref_order = sorted(ref_columns, key=lambda h: ref_columns[h])
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != len(header):
            raise UploadError(
                [
                    UploadProblem(
                        name,
                        number,
                        f"malformed TSV: {len(cells)} fields where the header has {len(header)}",
                    )
                ]
            )

        def cell(column: str, cells: list[str] = cells) -> str:
            return cells[index[column]].strip() if column in index else ""

        yield _Row(
            line=number,
            doc_id=cell("doc_id"),
            seg_id=cell("seg_id"),
            source=cell("source"),
            references=[cell(h) for h in ref_order],
            system=cell("system"),
            run=cell("run"),
            translation=cell("translation"),
        )


def _reference_columns(name: str, header: list[str]) -> dict[str, int]:
    columns: dict[str, int] = {}
    for h in header:
        match = REFERENCE_COLUMN_RE.match(h)
        if match:
            columns[h] = int(match["n"] or 1)
    if len(set(columns.values())) != len(columns):
        raise UploadError(
            [UploadProblem(name, 1, "malformed TSV: two reference columns have the same number")]
        )
    return columns


def _jsonl_rows(name: str, text: str) -> Iterable[_Row]:
    for number, line in enumerate(split_lines(text), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UploadError(
                [UploadProblem(name, number, f"malformed JSONL: {exc.msg} at column {exc.colno}")]
            ) from None
        except ValueError:
            # Not a syntax error: Python refuses to turn a number this long into an int.
            raise UploadError(
                [
                    UploadProblem(
                        name,
                        number,
                        "malformed JSONL: a number has more than "
                        f"{sys.get_int_max_str_digits():,} digits",
                    )
                ]
            ) from None
        except RecursionError:
            raise UploadError(
                [UploadProblem(name, number, "malformed JSONL: nested too deeply")]
            ) from None
        if not isinstance(obj, dict):
            raise UploadError(
                [UploadProblem(name, number, "malformed JSONL: each line must be a JSON object")]
            )
        unknown = set(obj) - {*TABLE_COLUMNS, "reference", "references"}
        if unknown:
            raise UploadError(
                [
                    UploadProblem(
                        name, number, f"malformed JSONL: unknown key {sorted(unknown)[0]!r}"
                    )
                ]
            )
        refs = obj.get("references", [])
        if "reference" in obj:
            refs = [obj["reference"]] if "references" not in obj else None
        if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
            raise UploadError(
                [
                    UploadProblem(
                        name,
                        number,
                        "malformed JSONL: give 'reference' as a string or 'references' as a "
                        "list of strings, not both",
                    )
                ]
            )
        values: dict[str, str] = {}
        for key in TABLE_COLUMNS:
            value = obj.get(key, "")
            if isinstance(value, bool) or not isinstance(value, str | int):
                raise UploadError(
                    [UploadProblem(name, number, f"malformed JSONL: {key!r} must be a string")]
                )
            values[key] = str(value).strip()
        yield _Row(
            line=number,
            references=[r.strip() for r in refs],
            **values,
        )


def _rows_to_upload(name: str, rows: list[_Row]) -> ParsedUpload:
    problems = _Collector()
    segments: dict[SegmentKey, ParsedSegment] = {}
    outputs: dict[tuple[str, str], ParsedOutput] = {}
    n_refs: int | None = None  # the reference count of the first segment; every one must match
    doc_order: list[str] = []
    doc_last_row: dict[str, int] = {}
    for row in rows:
        if not row.doc_id or not row.seg_id:
            problems.add(name, row.line, "doc_id and seg_id must not be empty")
            continue
        if not row.source:
            problems.add(name, row.line, "empty source")
            continue
        if any(not r for r in row.references):
            problems.add(name, row.line, "empty reference")
            continue
        key = (row.doc_id, row.seg_id)
        known = segments.get(key)
        if known is None:
            if row.doc_id in doc_last_row and doc_order[-1] != row.doc_id:
                problems.add(
                    name,
                    row.line,
                    f"document {row.doc_id!r} starts again after other documents; keep the "
                    "segments of a document together",
                )
                continue
            if row.doc_id not in doc_last_row:
                doc_order.append(row.doc_id)
            if n_refs is None:
                n_refs = len(row.references)
            elif len(row.references) != n_refs:
                # The references are stored as sets (reference i of every segment), so a segment
                # with more or fewer of them has no place to go.
                problems.add(
                    name,
                    row.line,
                    f"{_count(len(row.references), 'reference')}, but earlier rows have {n_refs}; "
                    "every segment needs the same number of references",
                )
            segments[key] = ParsedSegment(
                row.doc_id, row.seg_id, row.source, row.references, row.line, name
            )
        elif known.source != row.source or known.references != row.references:
            problems.add(
                name,
                row.line,
                f"doc {row.doc_id} seg {row.seg_id} has a different source or reference than "
                f"at line {known.line}",
            )
            continue
        doc_last_row[row.doc_id] = row.line
        if row.system:
            run = row.run or DEFAULT_RUN
            out = outputs.setdefault((row.system, run), ParsedOutput(row.system, run, name))
            if key in out.by_key:
                problems.add(
                    name,
                    row.line,
                    f"duplicate system/run {row.system}/{run} for doc {row.doc_id} seg "
                    f"{row.seg_id}: also at line {out.by_key[key][1]}",
                )
                continue
            out.by_key[key] = (row.translation, row.line)
        elif row.run or row.translation:
            problems.add(name, row.line, "unknown system: a run or translation without a system")
    problems.raise_if_any()
    _check_outputs_complete(problems, list(segments), list(outputs.values()))
    problems.raise_if_any()
    return ParsedUpload(
        form=FORM_TABLE,
        files=[name],
        segments=list(segments.values()),
        reference_labels=[f"reference {i + 1}" for i in range(n_refs or 0)],
        outputs=list(outputs.values()),
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _check_outputs_complete(
    problems: _Collector, keys: list[SegmentKey], outputs: list[ParsedOutput]
) -> None:
    for out in outputs:
        missing = [k for k in keys if k not in out.by_key]
        if missing:
            doc, seg = missing[0]
            problems.add(
                out.file,
                None,
                f"system/run {out.system}/{out.run} has no translation for doc {doc} seg {seg} "
                f"({len(missing)} segment(s) missing); every system needs every segment",
            )


# --------------------------------------------------------------------------------------------
# WMT XML


def parse_xml(files: Sequence[UploadFile], *, max_bytes: int) -> ParsedUpload:
    problems = _Collector()
    segments: dict[SegmentKey, ParsedSegment] = {}
    doc_order: list[str] = []
    ref_labels: list[str] | None = None
    outputs: dict[tuple[str, str], ParsedOutput] = {}
    for upload in files:
        text = decode_text(upload, max_bytes=max_bytes)
        root = _parse_xml_root(upload.name, text)
        for doc in root.iter("doc"):
            doc_id = (doc.get("id") or "").strip()
            if not doc_id:
                problems.add(upload.name, doc.sourceline, "malformed XML: <doc> without an id")
                continue
            src_blocks = doc.findall("src")
            if len(src_blocks) > 1:
                problems.add(upload.name, doc.sourceline, f"doc {doc_id} has more than one <src>")
                continue
            if src_blocks:
                if any(k[0] == doc_id for k in segments):
                    problems.add(
                        upload.name, doc.sourceline, f"doc {doc_id} has its source given twice"
                    )
                    continue
                labels = _xml_doc_segments(
                    problems, upload.name, doc, doc_id, src_blocks[0], segments
                )
                if labels is None:
                    continue
                doc_order.append(doc_id)
                if ref_labels is None:
                    ref_labels = labels
                elif labels != ref_labels:
                    problems.add(
                        upload.name,
                        doc.sourceline,
                        f"doc {doc_id} has references {labels}, earlier documents {ref_labels}; "
                        "every document needs the same references",
                    )
            for hyp in doc.findall("hyp"):
                system = (hyp.get("system") or "").strip()
                if not system:
                    problems.add(
                        upload.name,
                        hyp.sourceline,
                        "unknown system: <hyp> without a system attribute",
                    )
                    continue
                run = (hyp.get("run") or "").strip() or DEFAULT_RUN
                out = outputs.setdefault((system, run), ParsedOutput(system, run, upload.name))
                for seg_id, seg_text, line in _xml_segs(problems, upload.name, hyp):
                    key = (doc_id, seg_id)
                    if key in out.by_key:
                        problems.add(
                            upload.name,
                            line,
                            f"duplicate system/run {system}/{run} for doc {doc_id} seg {seg_id}",
                        )
                        continue
                    out.by_key[key] = (seg_text, line)
    problems.raise_if_any()
    if not segments and not outputs:
        raise UploadError(
            [UploadProblem(files[0].name, None, "malformed XML: no <doc> with <src> or <hyp>")]
        )
    if segments:
        for out in outputs.values():
            for key, (_, line) in out.by_key.items():
                if key not in segments:
                    problems.add(
                        out.file,
                        line,
                        f"system {out.system} translates doc {key[0]} seg {key[1]}, which the "
                        "source does not have",
                    )
                    break
        problems.raise_if_any()
        _check_outputs_complete(problems, list(segments), list(outputs.values()))
        problems.raise_if_any()
    return ParsedUpload(
        form=FORM_XML,
        files=[f.name for f in files],
        segments=list(segments.values()) or None,
        reference_labels=ref_labels or [],
        outputs=list(outputs.values()),
    )


def _parse_xml_root(name: str, text: str) -> etree._Element:
    # lxml refuses str input with an encoding declaration, so it gets UTF-8 bytes; the parser is
    # told they are UTF-8, or it would obey a declared encoding (ISO-8859-1, say) and garble the
    # text that decode_text has already read as UTF-8.
    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        remove_comments=True,
        huge_tree=False,
        encoding="utf-8",
    )
    try:
        root = etree.fromstring(text.encode("utf-8"), parser=parser)
    except etree.XMLSyntaxError as exc:
        line = exc.lineno if exc.lineno else None
        message = exc.msg.split(", line ")[0] if exc.msg else "not well-formed"
        raise UploadError([UploadProblem(name, line, f"malformed XML: {message}")]) from None
    if root.tag not in {"dataset", "refset", "srcset", "tstset"}:
        raise UploadError(
            [
                UploadProblem(
                    name,
                    root.sourceline,
                    f"malformed XML: the root element is <{root.tag}>, expected <dataset>",
                )
            ]
        )
    return root


def _xml_segs(problems: _Collector, name: str, block: etree._Element) -> list[tuple[str, str, int]]:
    segs: list[tuple[str, str, int]] = []
    seen: set[str] = set()
    for seg in block.iter("seg"):
        seg_id = (seg.get("id") or "").strip()
        line = seg.sourceline or 0
        if not seg_id:
            problems.add(name, line, "malformed XML: <seg> without an id")
            continue
        if seg_id in seen:
            problems.add(name, line, f"malformed XML: seg id {seg_id} appears twice in one block")
            continue
        seen.add(seg_id)
        segs.append((seg_id, "".join(seg.itertext()).strip(), line))
    return segs


def _xml_doc_segments(
    problems: _Collector,
    name: str,
    doc: etree._Element,
    doc_id: str,
    src: etree._Element,
    segments: dict[SegmentKey, ParsedSegment],
) -> list[str] | None:
    src_segs = _xml_segs(problems, name, src)
    if not src_segs:
        problems.add(name, src.sourceline, f"doc {doc_id}: <src> has no <seg>")
        return None
    for seg_id, seg_text, line in src_segs:
        if not seg_text:
            problems.add(name, line, f"empty source (doc {doc_id} seg {seg_id})")
    src_ids = [s[0] for s in src_segs]
    labels: list[str] = []
    ref_texts: list[dict[str, str]] = []
    label_max = _max_length(Reference, "label")
    for n, ref in enumerate(doc.findall("ref"), start=1):
        label = (ref.get("translator") or "").strip() or f"reference {n}"
        if len(label) > label_max:
            problems.add(
                name,
                ref.sourceline,
                f"reference label (the translator attribute of <ref>) of doc {doc_id} longer "
                f"than {label_max} characters",
            )
        labels.append(label)
        texts: dict[str, str] = {}
        for seg_id, seg_text, line in _xml_segs(problems, name, ref):
            if seg_id not in src_ids:
                problems.add(name, line, f"reference seg {seg_id} is not in doc {doc_id}'s source")
            elif not seg_text:
                problems.add(name, line, f"empty reference (doc {doc_id} seg {seg_id})")
            texts[seg_id] = seg_text
        missing = [s for s in src_ids if s not in texts]
        if missing:
            problems.add(
                name,
                ref.sourceline,
                f"reference {label} of doc {doc_id} lacks seg {missing[0]}",
            )
        ref_texts.append(texts)
    for seg_id, seg_text, line in src_segs:
        segments[(doc_id, seg_id)] = ParsedSegment(
            doc_id, seg_id, seg_text, [t.get(seg_id, "") for t in ref_texts], line, name
        )
    return labels
