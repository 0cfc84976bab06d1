"""Uploads as plain text files: one segment per line, the source, references and one file per
system and run."""

from __future__ import annotations

from collections.abc import Sequence

from django.utils.translation import gettext_lazy as _

from annotation.campaigns.uploads import (
    DEFAULT_RUN,
    SYSTEM_FILE_RE,
    Collector,
    ParsedOutput,
    ParsedSegment,
    ParsedUpload,
    UploadError,
    UploadFile,
    UploadFormat,
    UploadProblem,
    decode_text,
    max_length_of,
    split_lines,
)
from annotation.models import Reference


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


FORM_PLAIN = "plain"


def parse_plain(files: Sequence[UploadFile], *, max_bytes: int) -> ParsedUpload:
    """A plain-text upload: the source file (with its references and document ids) first, then
    the system files; every problem names its file and line."""
    sources = [f for f in files if f.role == "source"]
    references = [f for f in files if f.role == "references"]
    systems = [f for f in files if f.role == "systems"]
    doc_files = [f for f in files if f.role == "doc_ids"]
    problems = Collector()
    _check_file_roles(sources, references, systems, doc_files)

    segments: list[ParsedSegment] | None = None
    reference_labels: list[str] = []
    n_lines: int | None = None
    source_name = sources[0].name if sources else ""
    if sources:
        segments = _source_segments(
            problems,
            sources[0],
            references,
            doc_files[0] if doc_files else None,
            max_bytes=max_bytes,
        )
        reference_labels = [ref.name for ref in references]
        n_lines = len(segments)  # one segment per source line
    outputs = _system_outputs(problems, systems, n_lines, source_name, max_bytes=max_bytes)
    problems.raise_if_any()
    return ParsedUpload(
        form=FORM_PLAIN,
        files=[f.name for f in files],
        segments=segments,
        reference_labels=reference_labels,
        outputs=outputs,
        documents_given=not segments or bool(doc_files),
        ids_from_places=True,
    )


def _check_file_roles(
    sources: list[UploadFile],
    references: list[UploadFile],
    systems: list[UploadFile],
    doc_files: list[UploadFile],
) -> None:
    """Refuse an upload whose files do not make a campaign's texts, before any is read."""
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


def _source_segments(
    problems: Collector,
    source: UploadFile,
    references: list[UploadFile],
    doc_file: UploadFile | None,
    *,
    max_bytes: int,
) -> list[ParsedSegment]:
    """The segments of the source file with their references and document ids (every file
    line by line); raises the problems of these files before the system files are read."""
    source_name = source.name
    src_lines = split_lines(decode_text(source, max_bytes=max_bytes))
    if not src_lines:
        raise UploadError([UploadProblem(source_name, None, "the source file is empty")])
    n_lines = len(src_lines)
    for i, line in enumerate(src_lines, start=1):
        if not line.strip():
            problems.add(source_name, i, "empty source line")
    ref_lines = _reference_lines(problems, references, n_lines, source_name, max_bytes=max_bytes)
    doc_ids = ["doc1"] * n_lines
    if doc_file is not None:
        doc_ids = _doc_ids(problems, doc_file, n_lines, source_name, max_bytes=max_bytes)
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
    return segments


def _reference_lines(
    problems: Collector,
    references: list[UploadFile],
    n_lines: int,
    source_name: str,
    *,
    max_bytes: int,
) -> list[list[str]]:
    """The lines of each reference file, checked against the source's line count."""
    ref_lines: list[list[str]] = []
    label_max = max_length_of(Reference, "label")
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
    return ref_lines


def _doc_ids(
    problems: Collector, doc_file: UploadFile, n_lines: int, source_name: str, *, max_bytes: int
) -> list[str]:
    """The document id of each source line, from the doc-id file."""
    doc_name = doc_file.name
    doc_lines = split_lines(decode_text(doc_file, max_bytes=max_bytes))
    _check_count(problems, doc_name, len(doc_lines), n_lines, source_name)
    for i, line in enumerate(doc_lines, start=1):
        if not line.strip():
            problems.add(doc_name, i, "empty document id")
    doc_ids = [line.strip() for line in doc_lines]
    _check_contiguous_documents(problems, doc_name, doc_ids)
    return doc_ids


def _system_outputs(
    problems: Collector,
    systems: list[UploadFile],
    n_lines: int | None,
    source_name: str,
    *,
    max_bytes: int,
) -> list[ParsedOutput]:
    """One output per system file, named by the file (``<system>[.<run>].txt``); its line
    count is checked against the source's when the upload has one."""
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
    return outputs


def _check_count(problems: Collector, name: str, count: int, expected: int, against: str) -> None:
    if count != expected:
        line = min(count, expected) + 1
        problems.add(
            name,
            line,
            f"line counts differ: {name} has {count} lines, {against} has {expected}",
        )


def _check_contiguous_documents(problems: Collector, name: str, doc_ids: list[str]) -> None:
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


FORMAT = UploadFormat(
    key=FORM_PLAIN,
    label=_("Plain text"),
    parse=parse_plain,
    roles=frozenset({"source", "references", "systems", "doc_ids"}),
)
