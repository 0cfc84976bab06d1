"""Selectors (reads) of the annotation app."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from django.db.models import Count, Max, Prefetch, QuerySet, Sum

from annotation.models import (
    AnnotatorDecision,
    Assignment,
    Campaign,
    Document,
    Judgment,
    Reference,
    Run,
    Segment,
    System,
    Translation,
    Upload,
)

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations


@dataclass(frozen=True)
class CampaignCounts:
    documents: int
    segments: int
    references: int
    reference_sets: int
    systems: int
    runs: int
    translations: int


def campaign_counts(*, campaign: Campaign) -> CampaignCounts:
    """Sizes of a campaign's data, in a few aggregate queries."""
    segments = Segment.objects.filter(campaign=campaign)
    references = Reference.objects.filter(segment__campaign=campaign)
    runs = Run.objects.filter(system__campaign=campaign)
    return CampaignCounts(
        documents=Document.objects.filter(campaign=campaign).count(),
        segments=segments.count(),
        references=references.count(),
        reference_sets=references.values("index").distinct().count(),
        systems=System.objects.filter(campaign=campaign).count(),
        runs=runs.count(),
        translations=runs.aggregate(n=Count("translations"))["n"] or 0,
    )


def campaign_systems(*, campaign: Campaign) -> QuerySet[System]:
    """Systems with their runs (each annotated with its number of translations)."""
    runs = Run.objects.annotate(n_translations=Count("translations")).order_by("position")
    return (
        System.objects.filter(campaign=campaign)
        .prefetch_related(Prefetch("runs", queryset=runs))
        .order_by("name")
    )


class DocumentCounts(TypedDict):
    n_segments: int


def campaign_documents(
    *, campaign: Campaign
) -> QuerySet[WithAnnotations[Document, DocumentCounts]]:
    return (
        Document.objects.filter(campaign=campaign)
        .annotate(n_segments=Count("segments"))
        .order_by("position")
    )


def campaign_segments(*, campaign: Campaign) -> QuerySet[Segment]:
    """Segments in test-set order with their document and references."""
    return (
        Segment.objects.filter(campaign=campaign)
        .select_related("document")
        .prefetch_related(Prefetch("references", queryset=Reference.objects.order_by("index")))
        .order_by("position")
    )


def campaign_sample_rows(*, campaign: Campaign, limit: int = 5) -> list[dict[str, Any]]:
    """The first segments with their references and one translation per system (first run)."""
    segments = list(campaign_segments(campaign=campaign)[:limit])
    first_runs = {
        system.name: system.runs.all()[0]
        for system in campaign_systems(campaign=campaign)
        if system.runs.all()
    }
    texts: dict[tuple[int, int], str] = {}
    if segments and first_runs:
        rows = Translation.objects.filter(
            run__in=first_runs.values(), segment__in=segments
        ).values_list("run_id", "segment_id", "text")
        for run_id, segment_id, text in rows:
            texts[(run_id, segment_id)] = text
    return [
        {
            "segment": seg,
            "references": [ref.text for ref in seg.references.all()],
            "outputs": [
                (name, texts.get((run.pk, seg.pk), "")) for name, run in sorted(first_runs.items())
            ],
        }
        for seg in segments
    ]


def campaign_uploads(*, campaign: Campaign) -> QuerySet[Upload]:
    return Upload.objects.filter(campaign=campaign).select_related("uploaded_by")


def campaign_inputs_stamp(*, campaign: Campaign) -> dict[str, Any]:
    """What stands for a campaign's data and judgments in the content hashes of what is
    computed from them (the background analysis's fingerprint, the human analysis's cache key),
    in a few aggregate queries: data only changes through uploads (a replaced system gets new
    rows), so the upload records stand for the texts; judgments are summarised by count, last
    id, last submit and the sum of revisions; organizer decisions by their count and stamp; the
    campaign's analysis setting as it is."""
    judgments = Judgment.objects.filter(item__task__config__campaign=campaign).aggregate(
        n=Count("pk"), last=Max("pk"), submitted=Max("submitted_at"), revisions=Sum("revision")
    )
    decisions = AnnotatorDecision.objects.filter(campaign=campaign).aggregate(
        n=Count("pk"), last=Max("decided_at")
    )
    return {
        "uploads": list(
            Upload.objects.filter(campaign=campaign).order_by("pk").values_list("pk", flat=True)
        ),
        "judgments": judgments,
        "decisions": decisions,
        # The campaign's analysis setting: a change recomputes its stored results.
        "analysis_settings": campaign.analysis_settings,
    }


def content_hash(state: dict[str, Any]) -> str:
    """The SHA-256 (hex) of ``state`` as canonical JSON."""
    return hashlib.sha256(json.dumps(state, default=str, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class OpenHold:
    """A task an annotator holds unfinished."""

    username: str
    config_name: str
    task: int  # from 1
    items_done: int
    size: int


def campaign_open_holds(*, campaign: Campaign) -> list[OpenHold]:
    """The tasks of ``campaign`` that annotators hold unfinished (what closing it cuts short)."""
    held = (
        Assignment.objects.filter(task__config__campaign=campaign, status=Assignment.Status.ACTIVE)
        .select_related("annotator", "task__config")
        .order_by("task__config__name", "task__position", "annotator_id")
    )
    return [
        OpenHold(
            username=a.annotator.get_username(),
            config_name=a.task.config.name,
            task=a.task.position + 1,
            items_done=a.items_done,
            size=a.task.size,
        )
        for a in held
    ]
