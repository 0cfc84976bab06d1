"""Uploads as one table: TSV with a header row or JSON lines, one row per segment and system
output."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.utils.translation import gettext_lazy as _

from annotation.campaigns.uploads import (
    DEFAULT_RUN,
    REFERENCE_COLUMN_RE,
    TABLE_COLUMNS,
    Collector,
    ParsedOutput,
    ParsedSegment,
    ParsedUpload,
    SegmentKey,
    UploadError,
    UploadFile,
    UploadFormat,
    UploadProblem,
    check_outputs_complete,
    counted,
    decode_text,
    split_lines,
)


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


FORM_TABLE = "table"


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
    problems = Collector()
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
                    f"{counted(len(row.references), 'reference')}, but earlier rows have {n_refs}; "
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
    check_outputs_complete(problems, list(segments), list(outputs.values()))
    problems.raise_if_any()
    return ParsedUpload(
        form=FORM_TABLE,
        files=[name],
        segments=list(segments.values()),
        reference_labels=[f"reference {i + 1}" for i in range(n_refs or 0)],
        outputs=list(outputs.values()),
    )


def parse_table_upload(files: Sequence[UploadFile], *, max_bytes: int) -> ParsedUpload:
    """The upload's one table (the detection refuses several)."""
    return parse_table(files[0], max_bytes=max_bytes)


FORMAT = UploadFormat(
    key=FORM_TABLE,
    label=_("TSV / JSONL"),
    parse=parse_table_upload,
    extensions=(".tsv", ".jsonl", ".ndjson"),
    one_file_only="upload one TSV or JSONL file at a time",
)
