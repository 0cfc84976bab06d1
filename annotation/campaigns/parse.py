"""An upload's files parsed whatever their form: the form detected, then the matching parser, then
the checks every form shares."""

from __future__ import annotations

from collections.abc import Sequence

from annotation.campaigns.formats.plain import parse_plain
from annotation.campaigns.formats.table import parse_table
from annotation.campaigns.formats.xml import parse_xml
from annotation.campaigns.uploads import (
    FORM_PLAIN,
    FORM_TABLE,
    FORM_XML,
    ParsedUpload,
    UploadError,
    UploadFile,
    UploadProblem,
    check_name_lengths,
)


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
    check_name_lengths(parsed)
    return parsed
