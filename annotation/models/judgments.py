"""Judgments and what the analysis keeps beside them: values, revisions, organizer decisions,
imports and pseudonyms."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotation.models.campaigns import Campaign
from annotation.models.jobs import Job
from annotation.models.tasks import Assignment, Item, ItemOutput, ProtocolConfig


class Judgment(models.Model):
    """One annotator's answer to one item; a re-submit updates it (history in revisions)."""

    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="judgments")
    # No index of its own: the unique (annotator, item) index starts with it and serves every
    # lookup by annotator; a second one only cost each submit an index insert.
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="judgments",
        db_index=False,
    )
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="judgments")
    revision = models.PositiveIntegerField(default=1)
    submission_id = models.UUIDField()
    # The current answer as submitted ({output id: {criterion: value}}); the rows in
    # JudgmentValue hold the same numbers for queries, revisions hold the earlier answers.
    answer = models.JSONField()
    shown_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField()
    seconds = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["assignment", "item__position"]
        constraints = [
            models.UniqueConstraint(fields=["annotator", "item"], name="judgment_one_per_item"),
        ]

    def __str__(self) -> str:
        return f"judgment of {self.annotator} on item {self.item_id}"


class JudgmentValue(models.Model):
    """One number of a judgment: a criterion's value for one shown output."""

    # No index of its own: the unique index (judgment, output, criterion) starts with it.
    judgment = models.ForeignKey(
        Judgment, on_delete=models.CASCADE, related_name="values", db_index=False
    )
    output = models.ForeignKey(ItemOutput, on_delete=models.PROTECT, related_name="values")
    criterion = models.CharField(max_length=20)
    value = models.FloatField()

    class Meta:
        ordering = ["judgment", "output__position", "criterion"]
        constraints = [
            models.UniqueConstraint(
                fields=["judgment", "output", "criterion"], name="judgmentvalue_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.criterion}={self.value:g}"


class JudgmentSpan(models.Model):
    """One error span of a judgment, in one shown output: offsets in code points of the text
    the annotator saw (``text_length`` of them), a severity and, where the kind has them, a
    category. ``[text_length, text_length + 1)`` is the missing-content marker after the text.
    A revision replaces a judgment's spans (the earlier ones stay in its revisions' answers);
    that spans of an output do not overlap is checked when an answer is validated. Imported
    judgments may hold spans that overlap or share a start: Google's MQM files mark several
    errors of one output on the same words, and several source errors each on the marker."""

    # No index of its own: the index (judgment, output, start) starts with it.
    judgment = models.ForeignKey(
        Judgment, on_delete=models.CASCADE, related_name="spans", db_index=False
    )
    output = models.ForeignKey(ItemOutput, on_delete=models.PROTECT, related_name="spans")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    text_length = models.PositiveIntegerField()
    severity = models.CharField(max_length=20)
    category = models.CharField(max_length=60, blank=True)

    class Meta:
        ordering = ["judgment", "output__position", "start"]
        # No unique start (see above); the index serves lookups by judgment, as the judgment
        # has no index of its own.
        indexes = [models.Index(fields=["judgment", "output", "start"], name="judgmentspan_start")]
        constraints = [
            models.CheckConstraint(
                condition=Q(start__gte=0)
                & Q(start__lt=F("end"))
                & (
                    Q(end__lte=F("text_length"))
                    | (Q(start=F("text_length")) & Q(end=F("text_length") + 1))
                ),
                name="judgmentspan_within_text",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.severity} span {self.start}–{self.end} of judgment {self.judgment_id}"


class JudgmentRevision(models.Model):
    """Every accepted submit, in order; the judgment holds the latest."""

    # No index of its own: the unique index (judgment, revision) starts with it.
    judgment = models.ForeignKey(
        Judgment, on_delete=models.CASCADE, related_name="revisions", db_index=False
    )
    revision = models.PositiveIntegerField()
    submission_id = models.UUIDField(unique=True)
    values = models.JSONField()
    shown_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField()
    seconds = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["judgment", "revision"]
        constraints = [
            models.UniqueConstraint(fields=["judgment", "revision"], name="revision_unique"),
        ]

    def __str__(self) -> str:
        return f"revision {self.revision} of judgment {self.judgment_id}"


class AnnotatorDecision(models.Model):
    """An organizer's decision to include or exclude an annotator's judgments from a campaign's
    normalised aggregates, overriding the quality-control verdict, with the reason recorded."""

    # No index of its own: the unique index (campaign, annotator) starts with it.
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="annotator_decisions", db_index=False
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    included = models.BooleanField()
    reason = models.TextField()
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    decided_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["campaign", "annotator"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "annotator"], name="annotatordecision_unique"
            ),
            models.CheckConstraint(condition=~Q(reason=""), name="annotatordecision_has_reason"),
        ]

    def __str__(self) -> str:
        verb = "include" if self.included else "exclude"
        return f"{verb} {self.annotator} in {self.campaign_id}"


class JudgmentImport(models.Model):
    """A record of one import of historical judgments (Appraise, WMT or our own table format).

    The import created ``config`` with its tasks, items, outputs, assignments and judgments;
    ``summary`` holds what was added and the mapping from the file's annotator ids to accounts.
    """

    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="judgment_imports"
    )
    config = models.OneToOneField(
        ProtocolConfig, on_delete=models.CASCADE, related_name="judgment_import"
    )
    file_format = models.CharField(max_length=20)
    file_name = models.CharField(max_length=255)
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    options = models.JSONField(default=dict)
    summary = models.JSONField(default=dict)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"import of {self.file_name} into {self.campaign_id}"


class JudgmentImportJob(Job):
    """One import of historical judgments sent from the upload page or the API, run by a
    Celery worker (a file of a million rows takes minutes, past a web request's time limit).

    The file travels in ``content`` (the database is the one store web and worker processes
    share) and is emptied when the job ends. ``problems`` holds a refused file's problems
    (file, line, message); ``result`` the :class:`JudgmentImport` a finished job stored, which
    turns done in the import's own transaction."""

    # No index of its own: judgmentimportjob_recent starts with it.
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="judgment_import_jobs", db_index=False
    )
    file_name = models.CharField(max_length=255)
    content = models.BinaryField(default=bytes)
    options = models.JSONField(default=dict)
    problems = models.JSONField(default=list)
    result = models.OneToOneField(
        JudgmentImport, on_delete=models.SET_NULL, null=True, blank=True, related_name="job"
    )
    # The requester's language: stages and messages are written in it.
    language = models.CharField(max_length=10, default="en")

    class Meta(Job.Meta):
        indexes = [
            models.Index(fields=["campaign", "-created"], name="judgmentimportjob_recent"),
        ]

    def __str__(self) -> str:
        return f"import job {self.pk} of {self.file_name} ({self.status})"


class AnnotatorPseudonym(models.Model):
    """A stable pseudonymous number per annotator and campaign (``A001``) for reports, so that
    downloaded judgments do not carry usernames unless an organizer asks for them."""

    # No index of its own: the unique indexes (campaign, annotator) and (campaign, number) start
    # with it.
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="annotator_pseudonyms", db_index=False
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    number = models.PositiveIntegerField()

    class Meta:
        ordering = ["campaign", "number"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "annotator"], name="annotatorpseudonym_unique_annotator"
            ),
            models.UniqueConstraint(
                fields=["campaign", "number"], name="annotatorpseudonym_unique_number"
            ),
        ]

    def __str__(self) -> str:
        return self.code

    @property
    def code(self) -> str:
        return pseudonym_code(self.number)


def pseudonym_code(number: int) -> str:
    """``A001``, ``A002``, … (more digits once there are more than 999 annotators)."""
    return f"A{number:03d}"
