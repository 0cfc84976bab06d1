"""Services (writes) of the annotation app: campaigns and their data."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group, Permission, User
from django.db import transaction
from django.db.models import ProtectedError

from annotation.campaigns.parse import parse_upload
from annotation.campaigns.systems import system_name_is_human
from annotation.campaigns.uploads import (
    ParsedOutput,
    ParsedUpload,
    SegmentKey,
    UploadError,
    UploadFile,
    UploadProblem,
)
from annotation.models import (
    Campaign,
    Document,
    Reference,
    Run,
    Segment,
    System,
    Translation,
    Upload,
)
from annotation.permissions import ORGANIZERS_GROUP
from annotation.signals import campaign_data_changed

BATCH = 2000


def organizers_group_ensure(*, using: str = "default") -> Group:
    """The "Organizers" group, holding the permission to create campaigns."""
    group, _ = Group.objects.using(using).get_or_create(name=ORGANIZERS_GROUP)
    perm = Permission.objects.using(using).get(
        content_type__app_label="annotation", codename="add_campaign"
    )
    group.permissions.add(perm)
    return group


def user_make_organizer(*, user: User) -> None:
    """Let ``user`` create and manage campaigns."""
    user.groups.add(organizers_group_ensure())
    # Django caches permissions on the user object; drop the cache so the change shows at once.
    for cache in ("_perm_cache", "_user_perm_cache", "_group_perm_cache"):
        user.__dict__.pop(cache, None)


def campaign_create(*, owner: User, **fields: Any) -> Campaign:
    """Create a campaign owned by ``owner``; ``organizers`` (co-organizers) may be given."""
    organizers = fields.pop("organizers", [])
    campaign = Campaign(owner=owner, **fields)
    campaign.full_clean()
    campaign.save()
    if organizers:
        campaign.organizers.set(organizers)
    return campaign


def campaign_update(*, campaign: Campaign, **fields: Any) -> Campaign:
    organizers = fields.pop("organizers", None)
    for name, value in fields.items():
        setattr(campaign, name, value)
    campaign.full_clean()
    campaign.save()
    if organizers is not None:
        campaign.organizers.set(organizers)
    return campaign


def campaign_data_import(
    *,
    campaign: Campaign,
    files: Sequence[UploadFile],
    user: User | None,
    replace_systems: bool = False,
) -> Upload:
    """Validate an upload against the campaign and store it, all or nothing.

    The first upload of a campaign must bring the source (with references and documents); later
    uploads add systems, and may repeat the same source. A system that the campaign already has is
    only replaced when ``replace_systems`` is true. Raises :class:`UploadError` (file and line).
    """
    parsed = parse_upload(files, max_bytes=settings.EVALSITE_UPLOAD_MAX_BYTES)
    return campaign_parsed_store(
        campaign=campaign, parsed=parsed, user=user, replace_systems=replace_systems
    )


def campaign_parsed_store(
    *,
    campaign: Campaign,
    parsed: ParsedUpload,
    user: User | None,
    replace_systems: bool = False,
) -> Upload:
    """Store texts already parsed (an upload's files, or the texts a judgment release carries),
    checked against the campaign as :func:`campaign_data_import` does, all or nothing."""
    with transaction.atomic():
        # One import at a time per campaign: the row lock serialises concurrent uploads.
        locked = Campaign.objects.select_for_update().get(pk=campaign.pk)
        keys, positions, summary = _segments_for_upload(locked, parsed)
        summary.update(_store_outputs(locked, parsed, keys, positions, replace_systems))
        if parsed.segments and len(parsed.segments) > 1 and not parsed.documents_given:
            # Document context and document screens would show unrelated sentences together.
            summary["warnings"] = [
                f"No document ids: the {len(parsed.segments)} segments were put in one "
                "document (doc1), so document context on the annotation page shows "
                "neighbouring lines that may not belong together. Upload a doc_ids file (one "
                "id per line) or a TSV, JSONL or WMT XML file with documents."
            ]
            summary["no_document_ids"] = len(parsed.segments)
        fewer = _documents_with_fewer_references(parsed)
        if fewer and summary.get("segments_added"):
            summary.setdefault("warnings", []).append(
                f"{len(fewer)} of the documents have fewer references than others "
                f"({', '.join(fewer[:3])}{', …' if len(fewer) > 3 else ''}): reference-based "
                "metrics score each segment against the references it has (sacreBLEU's rule; "
                "signatures say nrefs:var)."
            )
            summary["documents_with_fewer_references"] = len(fewer)
        campaign_data_changed.send(sender=Upload, campaign_id=locked.pk)
        return Upload.objects.create(
            campaign=locked,
            uploaded_by=user,
            form=parsed.form,
            files=parsed.files,
            summary=summary,
        )


def _documents_with_fewer_references(parsed: ParsedUpload) -> list[str]:
    fewer: dict[str, None] = {}
    for seg in parsed.segments or []:
        if any(text is None for text in seg.references):
            fewer[seg.doc_id] = None
    return list(fewer)


def _segments_for_upload(
    campaign: Campaign, parsed: ParsedUpload
) -> tuple[dict[SegmentKey, int], list[int], dict[str, Any]]:
    """Segment ids by (doc_id, seg_id) and by position: existing ones (checked against what the
    upload repeats) or new ones created from the upload."""
    existing = list(
        Segment.objects.filter(campaign=campaign)
        .order_by("position")
        .values_list("id", "document__external_id", "external_id", "source")
    )
    if existing:
        if parsed.segments is not None:
            _check_same_segments(campaign, parsed, existing)
        keys = {(doc, seg): pk for pk, doc, seg, _ in existing}
        return keys, [row[0] for row in existing], {"segments_added": 0}
    if parsed.segments is None:
        raise UploadError(
            [
                UploadProblem(
                    parsed.files[0],
                    None,
                    "this campaign has no source text yet; upload the source (and references) "
                    "with the first systems or before them",
                )
            ]
        )
    documents: dict[str, Document] = {}
    for seg in parsed.segments:
        if seg.doc_id not in documents:
            documents[seg.doc_id] = Document(
                campaign=campaign, external_id=seg.doc_id, position=len(documents)
            )
    Document.objects.bulk_create(documents.values(), batch_size=BATCH)
    within: dict[str, int] = {}
    segment_rows = []
    for position, seg in enumerate(parsed.segments):
        index = within.get(seg.doc_id, 0)
        within[seg.doc_id] = index + 1
        segment_rows.append(
            Segment(
                campaign=campaign,
                document=documents[seg.doc_id],
                position=position,
                position_in_document=index,
                external_id=seg.seg_id,
                source=seg.source,
            )
        )
    Segment.objects.bulk_create(segment_rows, batch_size=BATCH)
    references = [
        Reference(segment=row, index=i, label=parsed.reference_labels[i], text=text)
        for row, seg in zip(segment_rows, parsed.segments, strict=True)
        for i, text in enumerate(seg.references)
        if text is not None
    ]
    Reference.objects.bulk_create(references, batch_size=BATCH)
    keys = {
        (s.doc_id, s.seg_id): row.pk for s, row in zip(parsed.segments, segment_rows, strict=True)
    }
    return (
        keys,
        [row.pk for row in segment_rows],
        {
            "segments_added": len(segment_rows),
            "documents_added": len(documents),
            "references_added": len(references),
        },
    )


def _check_same_segments(
    campaign: Campaign, parsed: ParsedUpload, existing: list[tuple[int, str, str, str]]
) -> None:
    """An upload to a campaign with data may repeat its source, but not change it."""
    assert parsed.segments is not None
    first = parsed.segments[0]
    if len(parsed.segments) != len(existing):
        raise UploadError(
            [
                UploadProblem(
                    first.file,
                    None,
                    f"this campaign already has {len(existing)} segments and the upload has "
                    f"{len(parsed.segments)}; a campaign's source text cannot change",
                )
            ]
        )
    refs: dict[int, dict[int, str]] = {}
    for segment_pk, index, text in Reference.objects.filter(segment__campaign=campaign).values_list(
        "segment_id", "index", "text"
    ):
        refs.setdefault(segment_pk, {})[index] = text
    for seg, (pk, doc, seg_id, source) in zip(parsed.segments, existing, strict=True):
        if parsed.ids_from_places and seg.source == source:
            same_place = True  # plain text carries no ids unless a doc-id file was given
        else:
            same_place = (seg.doc_id, seg.seg_id) == (doc, seg_id)
        if not same_place or seg.source != source:
            raise UploadError(
                [
                    UploadProblem(
                        seg.file,
                        seg.line,
                        "this campaign already has source text and this line differs from it "
                        f"(doc {doc} seg {seg_id}); a campaign's source text cannot change",
                    )
                ]
            )
        given = {i: text for i, text in enumerate(seg.references) if text is not None}
        if seg.references and given != refs.get(pk, {}):
            raise UploadError(
                [
                    UploadProblem(
                        seg.file,
                        seg.line,
                        f"the references of doc {doc} seg {seg_id} differ from the campaign's; "
                        "references cannot change once uploaded",
                    )
                ]
            )


def _store_outputs(
    campaign: Campaign,
    parsed: ParsedUpload,
    keys: dict[SegmentKey, int],
    positions: list[int],
    replace_systems: bool,
) -> dict[str, Any]:
    by_system: dict[str, list[ParsedOutput]] = {}
    for out in parsed.outputs:
        by_system.setdefault(out.system, []).append(out)
    texts = {(out.system, out.run): _aligned_texts(out, keys, positions) for out in parsed.outputs}

    present = {
        s.name: s for s in System.objects.filter(campaign=campaign, name__in=list(by_system))
    }
    if present and not replace_systems:
        names = ", ".join(sorted(present))
        raise UploadError(
            [
                UploadProblem(
                    by_system[sorted(present)[0]][0].file,
                    None,
                    f"this campaign already has system(s) {names}; to replace them, confirm "
                    "'replace existing systems' (API: replace=true)",
                )
            ]
        )
    for name, system in present.items():
        try:
            system.delete()
        except ProtectedError:
            raise UploadError(
                [
                    UploadProblem(
                        by_system[name][0].file,
                        None,
                        f"system {name} is shown in annotation tasks and cannot be replaced; "
                        "upload it under a new name",
                    )
                ]
            ) from None

    translations: list[Translation] = []
    runs_added = 0
    for name, outputs in by_system.items():
        system = System.objects.create(
            campaign=campaign, name=name, human=system_name_is_human(name)
        )
        for position, out in enumerate(sorted(outputs, key=lambda o: o.run)):
            run = Run.objects.create(system=system, name=out.run, position=position)
            runs_added += 1
            translations.extend(
                Translation(run=run, segment_id=segment_id, text=text)
                for segment_id, text in texts[(out.system, out.run)]
            )
    Translation.objects.bulk_create(translations, batch_size=BATCH)
    return {
        "systems_added": sorted(set(by_system) - set(present)),
        "systems_replaced": sorted(present),
        "runs_added": runs_added,
        "translations_added": len(translations),
    }


def _aligned_texts(
    out: ParsedOutput, keys: dict[SegmentKey, int], positions: list[int]
) -> list[tuple[int, str]]:
    """(segment id, text) for every segment of the campaign, or an error naming file and line."""
    if out.by_position is not None:
        if len(out.by_position) != len(positions):
            raise UploadError(
                [
                    UploadProblem(
                        out.file,
                        min(len(out.by_position), len(positions)) + 1,
                        f"line counts differ: {out.file} has {len(out.by_position)} lines, the "
                        f"campaign's source has {len(positions)}",
                    )
                ]
            )
        return list(zip(positions, out.by_position, strict=True))
    for key, (_, line) in out.by_key.items():
        if key not in keys:
            raise UploadError(
                [
                    UploadProblem(
                        out.file,
                        line,
                        f"unknown segment: doc {key[0]} seg {key[1]} is not in this campaign",
                    )
                ]
            )
    missing = [key for key in keys if key not in out.by_key]
    if missing:
        raise UploadError(
            [
                UploadProblem(
                    out.file,
                    None,
                    f"system/run {out.system}/{out.run} has no translation for doc {missing[0][0]} "
                    f"seg {missing[0][1]} ({len(missing)} segment(s) missing)",
                )
            ]
        )
    return [(keys[key], text) for key, (text, _) in out.by_key.items()]
