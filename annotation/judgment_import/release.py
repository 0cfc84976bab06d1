"""One step from a release of judgments to an analysed campaign: the release's texts build a new
campaign and its judgments are imported onto it, all or nothing.

A layout can do so when it carries its texts, or names the companion files that do
(``JudgmentFormat.texts``: Google's MQM TSV; Appraise's scores with their batches). The page,
the API and ``import_judgments --create-campaign`` all call :func:`campaign_from_release`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction

from annotation.campaigns.services import campaign_create, campaign_parsed_store
from annotation.campaigns.uploads import (
    ParsedUpload,
    UploadError,
    UploadFile,
    UploadProblem,
    upload_file_read,
)
from annotation.judgment_import.formats import JUDGMENT_FORMATS, judgment_format, judgments_parse
from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.progress import ImportProgress
from annotation.judgment_import.rows import ParsedJudgments
from annotation.judgment_import.services import (
    ImportPreview,
    judgments_import_parsed,
    judgments_preview_parsed,
)
from annotation.models import Campaign, JudgmentImport, System, Upload

# BCP-47's "undetermined": a campaign's languages when neither the release nor the organizer
# names them (they can be set on the campaign's page later).
UNDETERMINED = "und"


def release_format_keys() -> list[str]:
    """The layouts whose releases can build a campaign (they have a ``texts`` hook)."""
    return [layout.key for layout in JUDGMENT_FORMATS if layout.texts is not None]


@dataclass(frozen=True)
class ReleasePreview:
    """What a release would build and store, built and then rolled back: the new campaign's
    documents, segments and systems (``True`` for a human one) and its judgments' preview."""

    documents: int
    segments: int
    systems: list[tuple[str, bool]]
    judgments: ImportPreview

    def as_json(self) -> dict[str, Any]:
        return {
            "documents": self.documents,
            "segments": self.segments,
            "systems": [{"name": name, "human": human} for name, human in self.systems],
            "judgments": self.judgments.as_json(),
        }


@dataclass(frozen=True)
class _Release:
    texts: ParsedUpload
    placed: ParsedJudgments
    languages: tuple[str, str]


def release_fields(
    owner: User, data: Mapping[str, Any], options: ImportOptions | None = None
) -> dict[str, Any]:
    """The arguments of :func:`campaign_from_release` and :func:`release_preview` from the
    fields the page's form and the API share (``campaign_name``, ``file``, ``batches``, the
    languages), the uploaded files read (raises UploadError for one over the size limit)."""
    max_bytes = settings.EVALSITE_UPLOAD_MAX_BYTES
    return {
        "owner": owner,
        "name": data["campaign_name"].strip(),
        "files": [upload_file_read(data["file"], max_bytes=max_bytes)],
        "companions": [upload_file_read(f, max_bytes=max_bytes) for f in data["batches"]],
        "options": options,
        "source_language": data["source_language"].strip(),
        "target_language": data["target_language"].strip(),
    }


def campaign_from_release(
    *,
    owner: User,
    name: str,
    files: Sequence[UploadFile],
    companions: Sequence[UploadFile] = (),
    options: ImportOptions | None = None,
    source_language: str = "",
    target_language: str = "",
    report: ImportProgress | None = None,
) -> JudgmentImport:
    """Create the campaign ``name`` owned by ``owner`` from a release: its documents, segments,
    sources and system outputs from the release's texts, then its judgments imported onto it,
    in one transaction (a refused step leaves no campaign). The languages are the flags, else
    the release's one language pair, else ``und``; the campaign's page can change them.

    Returns the import's record (``record.campaign`` is the new campaign).

    Raises:
        UploadError: a file the layout cannot read, a layout without texts, texts or
            judgments that do not fit; each names the file and, where there is one, the line.
        django.core.exceptions.ValidationError: a campaign name or language that does not fit.
    """
    options = options or ImportOptions()
    release = _release_read(files, companions, options, source_language, target_language)
    with transaction.atomic():
        campaign, _ = _campaign_with_texts(owner, name, release)
        return judgments_import_parsed(
            campaign=campaign, parsed=release.placed, user=owner, options=options, report=report
        )


def release_preview(
    *,
    owner: User,
    name: str,
    files: Sequence[UploadFile],
    companions: Sequence[UploadFile] = (),
    options: ImportOptions | None = None,
    source_language: str = "",
    target_language: str = "",
) -> ReleasePreview:
    """What :func:`campaign_from_release` would build and import, found by building it and
    rolling it back: nothing is left. Raises the same errors."""
    options = options or ImportOptions()
    release = _release_read(files, companions, options, source_language, target_language)
    with transaction.atomic():
        campaign, upload = _campaign_with_texts(owner, name, release)
        preview = judgments_preview_parsed(
            campaign=campaign, parsed=release.placed, options=options
        )
        systems = list(
            System.objects.filter(campaign=campaign).order_by("name").values_list("name", "human")
        )
        transaction.set_rollback(True)
    return ReleasePreview(
        documents=int(upload.summary.get("documents_added", 0)),
        segments=int(upload.summary.get("segments_added", 0)),
        systems=systems,
        judgments=preview,
    )


def _campaign_with_texts(owner: User, name: str, release: _Release) -> tuple[Campaign, Upload]:
    campaign = campaign_create(
        owner=owner,
        name=name,
        source_language=release.languages[0],
        target_language=release.languages[1],
    )
    upload = campaign_parsed_store(campaign=campaign, parsed=release.texts, user=owner)
    return campaign, upload


def _release_read(
    files: Sequence[UploadFile],
    companions: Sequence[UploadFile],
    options: ImportOptions,
    source_language: str,
    target_language: str,
) -> _Release:
    """The release's texts and its rows placed on them; refuses what cannot build a campaign."""
    if len(files) != 1:
        raise UploadError(
            [
                UploadProblem(
                    ", ".join(f.name for f in files) or "judgments",
                    None,
                    f"a new campaign is built from one judgments file, not {len(files)}; import "
                    "the others onto it afterwards",
                )
            ]
        )
    upload = files[0]
    parsed = judgments_parse(
        upload,
        file_format=options.file_format,
        language_pair=options.language_pair,
        max_bytes=settings.EVALSITE_UPLOAD_MAX_BYTES,
    )
    layout = judgment_format(parsed.file_format)
    if layout is None or layout.texts is None:
        raise UploadError(
            [
                UploadProblem(
                    upload.name,
                    None,
                    f"a {parsed.file_format} file does not carry the texts a campaign needs; "
                    f"these formats can create a campaign: {', '.join(release_format_keys())}. "
                    "Otherwise create the campaign, upload its texts, then import the judgments",
                )
            ]
        )
    texts, placed = layout.texts(parsed, companions)
    pair = _language_pair(parsed)
    return _Release(
        texts=texts,
        placed=placed,
        languages=(source_language or pair[0], target_language or pair[1]),
    )


def _language_pair(parsed: ParsedJudgments) -> tuple[str, str]:
    """The source and target language the rows name, when they name one pair (``de-en``)."""
    pairs = {row.language_pair for row in parsed.rows}
    if len(pairs) == 1:
        source, _, target = next(iter(pairs)).partition("-")
        if source.strip() and target.strip():
            return source.strip(), target.strip()
    return UNDETERMINED, UNDETERMINED
