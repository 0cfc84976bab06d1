"""A row that carries its texts checked against the campaign's: the source and the shown output
must be the campaign's (up to Unicode normalisation and runs of whitespace), or the file numbers
its segments another way."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping

from annotation.judgment_import.rows import BAD_REF, ImportRow, Problems, clip


def same_text(a: str, b: str) -> bool:
    """Texts equal up to Unicode normalisation (NFC) and runs of whitespace."""
    return " ".join(unicodedata.normalize("NFC", a).split()) == " ".join(
        unicodedata.normalize("NFC", b).split()
    )


def texts_match(
    problems: Problems,
    row: ImportRow,
    segment_id: int,
    shown: str,
    *,
    sources: Mapping[int, str],
    names: Mapping[int, str],
) -> bool:
    """A row that carries its texts (``source``, ``output``) must carry the campaign's: a
    mismatch means the file numbers segments another way, which would misalign every
    judgment while every system-level number stayed plausible."""
    name = names.get(segment_id, str(segment_id))
    hint = (
        " — the file numbers its segments another way than the campaign (WMT's DA files "
        "number them after sorting the documents by id)"
    )
    if row.source_text and not same_text(row.source_text, sources.get(segment_id, "")):
        problems.add(
            row.line,
            f"the source text is not the campaign's segment {name} (row {row.segment!r}): "
            f"{clip(row.source_text)!r} in the file, "
            f"{clip(sources.get(segment_id, ''))!r} in the campaign{hint}",
        )
        return False
    if row.output_text and row.type != BAD_REF and not same_text(row.output_text, shown):
        problems.add(
            row.line,
            f"the output text is not what the campaign holds for {row.system or 'the reference'}"
            f" on segment {name}: {clip(row.output_text)!r} in the file, {clip(shown)!r} in "
            f"the campaign{hint}",
        )
        return False
    return True
