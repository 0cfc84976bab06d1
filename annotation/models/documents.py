"""Document-level scores: on a document screen whose protocol asks for one, the annotator's
0–100 score of the whole document (or window) shown, given after its segments. Rows of their
own, never values of a segment's judgment, so that the segment-level analysis stays as it is."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.models.campaigns import Document, Run, System
from annotation.models.tasks import Assignment, Item, ItemKind

DOCUMENT_SCORE_MIN = 0
DOCUMENT_SCORE_MAX = 100


class DocumentJudgment(models.Model):
    """One annotator's document-level score of one document screen. ``screen`` is the screen's
    first item (``Item.screen`` of every item of the screen is its position); ``system`` and
    ``run`` are the screen's (none when it shows references), ``kind`` its QC kind. At most one
    per annotator and screen: a re-submit updates it, the earlier score goes to its revisions."""

    # No index of its own: the unique (annotator, screen) index starts with it.
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="document_judgments",
        db_index=False,
    )
    screen = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="document_judgments")
    assignment = models.ForeignKey(
        Assignment, on_delete=models.CASCADE, related_name="document_judgments"
    )
    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    system = models.ForeignKey(
        System, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    run = models.ForeignKey(Run, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    kind = models.CharField(max_length=10, choices=ItemKind.choices)
    score = models.PositiveSmallIntegerField()
    revision = models.PositiveIntegerField(default=1)
    submission_id = models.UUIDField()
    shown_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField()
    seconds = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["assignment", "screen__position"]
        constraints = [
            models.UniqueConstraint(
                fields=["annotator", "screen"], name="documentjudgment_one_per_screen"
            ),
            models.CheckConstraint(
                condition=Q(score__gte=DOCUMENT_SCORE_MIN) & Q(score__lte=DOCUMENT_SCORE_MAX),
                name="documentjudgment_score_range",
            ),
        ]

    def __str__(self) -> str:
        return f"document score of {self.annotator} on screen {self.screen_id}"


class DocumentJudgmentRevision(models.Model):
    """Every accepted document score, in order; the document judgment holds the latest."""

    # No index of its own: the unique index (judgment, revision) starts with it.
    judgment = models.ForeignKey(
        DocumentJudgment, on_delete=models.CASCADE, related_name="revisions", db_index=False
    )
    revision = models.PositiveIntegerField()
    submission_id = models.UUIDField()
    score = models.PositiveSmallIntegerField()
    shown_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField()
    seconds = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["judgment", "revision"]
        constraints = [
            models.UniqueConstraint(
                fields=["judgment", "revision"], name="documentjudgmentrevision_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"revision {self.revision} of document judgment {self.judgment_id}"
