"""What a layout of imported judgments is: one object per layout module, listed once in
annotation/judgment_import/formats.py. Detection, parsing, the options a layout fixes, and the
choices of the page, the API and ``import_judgments --format`` are all read from these objects,
so a new layout is its own module and one line in that list."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.utils.functional import Promise

from annotation.campaigns.uploads import ParsedUpload, UploadFile
from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.rows import ParsedJudgments

# (file name, the file's lines, index of its first filled line) → does the file look like it.
# It may raise UploadError for a file that resembles the layout but cannot be imported.
LooksLike = Callable[[str, list[str], int], bool]

# (file name, the file's lines, index of its first filled line) → the rows; raises UploadError
# naming the file and line of every problem.
Parser = Callable[[str, list[str], int], ParsedJudgments]

# (parsed file, options) → (the options, the parsed file) as the import uses them.
OptionHook = Callable[[ParsedJudgments, ImportOptions], tuple[ImportOptions, ParsedJudgments]]

# (campaign, parsed file, options) → the rows with their segments as the campaign numbers them,
# and a report for the import's summary; raises UploadError when the file's numbering does not fit.
SegmentHook = Callable[..., tuple[ParsedJudgments, dict[str, Any] | None]]

# (parsed file, the release's companion files — Appraise's batches —) → the texts the judged
# items showed, as an upload of a new campaign brings them, and the rows with their segment ids
# as those texts number them; raises UploadError naming the file and line of every problem.
ReleaseTexts = Callable[
    [ParsedJudgments, Sequence[UploadFile]], tuple[ParsedUpload, ParsedJudgments]
]


def options_as_given(
    parsed: ParsedJudgments, options: ImportOptions
) -> tuple[ImportOptions, ParsedJudgments]:
    """A layout that holds any kind's judgments takes the options as the importer gives them."""
    return options, parsed


@dataclass(frozen=True)
class JudgmentFormat:
    """One layout of imported judgments."""

    key: str  # at most 20 characters (JudgmentImport.file_format)
    label: str | Promise  # the import page's choice
    looks_like: LooksLike
    parse: Parser
    # A layout that holds one kind's judgments sets the protocol here, and may work out the
    # values that depend on it.
    options: OptionHook = options_as_given
    # A layout whose segment ids are read against the campaign's documents (WMT's numbering).
    segments: SegmentHook | None = None
    # A layout that carries its texts (or names the files that do) builds a new campaign from
    # a release in one step (``import_judgments --create-campaign``).
    texts: ReleaseTexts | None = None
