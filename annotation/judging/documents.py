"""Document screens on the annotation page: the items of one screen (consecutive segments of a
document, grouped by ``Item.screen``) read together, each with its outputs, its segment as
shown (source or first reference) and the annotator's answer. The page shows them on one
screen and sends them in one request (``annotation.judging.screen_submit``), where every rule of a
submit (current item only, stale revisions, resent submits) holds for each segment and the
screen is stored whole or not at all; API clients may also read and answer one item at a
time."""

from __future__ import annotations

from dataclasses import replace

from django.contrib.auth.models import User

from annotation.judging.document_scores import DocumentScoreState
from annotation.judging.screens import Screen, ScreenSegment
from annotation.models import (
    DocumentJudgment,
    Item,
    ItemOutput,
    Judgment,
    ProtocolConfig,
    Reference,
    Segment,
)


def document_screen(screen: Screen, *, annotator: User) -> Screen:
    """``screen`` (of one item) widened to every item of its document screen, in document
    order; a screen of an item that is a screen of its own is returned as it is. At most five
    queries whatever the window's size (six with a document-level score). ``position``
    becomes the first item's; the screen counts as being revised when every item of it has an
    answer."""
    first = screen.item.screen
    if first is None:
        return screen
    items = list(
        Item.objects.filter(task_id=screen.item.task_id, screen=first)
        .select_related("segment__document")
        .order_by("position")
    )
    outputs: dict[int, list[ItemOutput]] = {item.pk: [] for item in items}
    for output in ItemOutput.objects.filter(item__in=items).order_by("position"):
        outputs[output.item_id].append(output)
    answers = {
        item_id: (answer, revision)
        for item_id, answer, revision in Judgment.objects.filter(
            annotator=annotator, item__in=items
        ).values_list("item_id", "answer", "revision")
    }
    references = (
        dict(
            Reference.objects.filter(
                segment__in=[i.segment_id for i in items], index=0
            ).values_list("segment_id", "text")
        )
        if screen.shows_reference
        else {}
    )
    segments = []
    for item in items:
        answer, revision = answers.get(item.pk, (None, 0))
        text = (
            references.get(item.segment_id, "") if screen.shows_reference else item.segment.source
        )
        for output in outputs[item.pk]:
            output.item = item
            # What the kind's screen template shows beside the output.
            output.shown_segment = text  # type: ignore[attr-defined]  # for the template only
        segments.append(ScreenSegment(item, outputs[item.pk], text, answer, revision))
    config = screen.assignment.task.config
    before, after = _window_context(items, config, references=screen.shows_reference)
    merged = {k: v for segment in segments for k, v in (segment.answer or {}).items()}
    document_score = _document_score(config, items, annotator)
    return replace(
        screen,
        item=items[0],
        outputs=[o for segment in segments for o in segment.outputs],
        position=items[0].position,
        revising=all(segment.answer is not None for segment in segments),
        # Every answered segment's answer, by output id: the page fills them in.
        answer=merged or None,
        revision=0,
        reference=None,
        context_before=before,
        context_after=after,
        segments=segments,
        document_score=document_score,
    )


def _document_score(
    config: ProtocolConfig, items: list[Item], annotator: User
) -> DocumentScoreState | None:
    """The screen's document score as the page shows it (one query), or None when the config
    asks for none."""
    if not config.asks_document_score:
        return None
    found = (
        DocumentJudgment.objects.filter(annotator=annotator, screen=items[0])
        .values_list("score", "revision")
        .first()
    )
    score, revision = found if found is not None else (None, 0)
    return DocumentScoreState(items[0].pk, items[0].position, items[-1].position, score, revision)


def _window_context(
    items: list[Item], config: ProtocolConfig, *, references: bool
) -> tuple[list[str], list[str]]:
    """The config's ``context_segments`` neighbours of a window (its items' segments, which
    are consecutive in their document): before its first segment and after its last, their
    first references (``references``) or their sources, in document order. A whole document
    has none."""
    n = config.context_segments
    if not n:
        return [], []
    first, last = items[0].segment, items[-1].segment
    near = Segment.objects.filter(
        document_id=first.document_id,
        position_in_document__gte=first.position_in_document - n,
        position_in_document__lte=last.position_in_document + n,
    ).exclude(position_in_document__range=(first.position_in_document, last.position_in_document))
    rows = (
        Reference.objects.filter(segment__in=near, index=0).values_list(
            "segment__position_in_document", "text"
        )
        if references
        else near.values_list("position_in_document", "source")
    )
    ordered = sorted(rows)
    return (
        [text for place, text in ordered if place < first.position_in_document],
        [text for place, text in ordered if place > last.position_in_document],
    )
