"""An upload's files parsed whatever their form: the form detected, then its parser, then the
checks every form shares. :data:`UPLOAD_FORMATS` is the one list of forms (see
``annotation.campaigns.uploads.UploadFormat``)."""

from __future__ import annotations

from collections.abc import Sequence

from annotation.campaigns.formats import plain, table, xml
from annotation.campaigns.uploads import (
    ParsedUpload,
    UploadError,
    UploadFile,
    UploadFormat,
    UploadProblem,
    check_name_lengths,
)

# Every form of campaign data; a file's form is the first that claims its field or its name.
UPLOAD_FORMATS: tuple[UploadFormat, ...] = (plain.FORMAT, table.FORMAT, xml.FORMAT)


def upload_format_label(key: str) -> str:
    """The label of the form called ``key``, in the active language; the key itself for an
    unknown one."""
    return str(next((form.label for form in UPLOAD_FORMATS if form.key == key), key))


def _form_of(upload: UploadFile) -> UploadFormat:
    lower = upload.name.lower()
    for form in UPLOAD_FORMATS:
        if upload.role in form.roles:
            return form
    for form in UPLOAD_FORMATS:
        if form.extensions and lower.endswith(form.extensions):
            return form
    raise UploadError(
        [
            UploadProblem(
                upload.name,
                None,
                "unknown data file type; expected .tsv, .jsonl or .xml "
                "(plain-text files go in the source, reference and system fields)",
            )
        ]
    )


def detect_form(files: Sequence[UploadFile]) -> UploadFormat:
    """Which form an upload is; mixed forms are an error."""
    if not files:
        raise UploadError([UploadProblem("upload", None, "no files were uploaded")])
    forms = {f.name: _form_of(f) for f in files}
    kinds = {form.key for form in forms.values()}
    if len(kinds) > 1:
        names = ", ".join(f"{name} ({form.key})" for name, form in forms.items())
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
    form = next(iter(forms.values()))
    if form.one_file_only and len(files) > 1:
        raise UploadError([UploadProblem("upload", None, form.one_file_only)])
    return form


def parse_upload(files: Sequence[UploadFile], *, max_bytes: int) -> ParsedUpload:
    """Parse and check an upload on its own (without looking at the campaign)."""
    parsed = detect_form(files).parse(files, max_bytes=max_bytes)
    check_name_lengths(parsed)
    return parsed
