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

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import models
from django.utils.functional import Promise

from annotation.models import Document, Run, Segment, System

DEFAULT_RUN = "main"
MAX_PROBLEMS = 20

SYSTEM_FILE_RE = re.compile(r"^(?P<system>[^./\\]+)(?:\.(?P<run>[^./\\]+))?\.txt$")
REFERENCE_COLUMN_RE = re.compile(r"^ref(?:erence)?(?:[_-]?(?P<n>\d+))?$")
TABLE_COLUMNS = ("doc_id", "seg_id", "source", "system", "run", "translation")


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
    # One per reference set of the upload (``ParsedUpload.reference_labels``); None where the
    # segment's document has fewer references than others (WMT's test-suite documents).
    references: Sequence[str | None]
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
    # False for plain text without a document-id file: every segment is put in one document.
    documents_given: bool = True
    # True where the segment ids are made up from the lines' places (plain text): a segment
    # already stored is matched by its text, not by its ids.
    ids_from_places: bool = False


# (the upload's files, keyword max_bytes) → the parsed upload; raises UploadError.
UploadParser = Callable[..., ParsedUpload]


@dataclass(frozen=True)
class UploadFormat:
    """One form a campaign's data comes in; annotation/campaigns/parse.py lists them all."""

    key: str  # at most 10 characters (Upload.form)
    label: str | Promise  # as the campaign's page names the upload
    parse: UploadParser
    # Data files of this form, by how their names end (lower case).
    extensions: tuple[str, ...] = ()
    # Form fields whose files are always of this form (plain text's source, references, …).
    roles: frozenset[str] = frozenset()
    # The refusal of several files in one upload; empty where a form reads several.
    one_file_only: str = ""


class Collector:
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


def max_length_of(model: type[models.Model], field_name: str) -> int:
    """The size of a model's CharField column: a longer value is reported as an upload problem
    instead of failing the INSERT."""
    field = model._meta.get_field(field_name)
    length = field.max_length if isinstance(field, models.Field) else None
    assert length is not None, f"{model.__name__}.{field_name} has no max_length"
    return length


def check_name_lengths(parsed: ParsedUpload) -> None:
    """Ids and names must fit their database columns (reference labels are checked where they
    are read, which knows their line)."""
    problems = Collector()
    doc_max, seg_max = max_length_of(Document, "external_id"), max_length_of(Segment, "external_id")
    for seg in parsed.segments or []:
        for what, value, limit in (
            ("document id", seg.doc_id, doc_max),
            ("segment id", seg.seg_id, seg_max),
        ):
            if len(value) > limit:
                problems.add(seg.file, seg.line, f"{what} longer than {limit} characters")
    system_max, run_max = max_length_of(System, "name"), max_length_of(Run, "name")
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


# --------------------------------------------------------------------------------------------
# TSV and JSONL


def counted(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def check_outputs_complete(
    problems: Collector, keys: list[SegmentKey], outputs: list[ParsedOutput]
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
