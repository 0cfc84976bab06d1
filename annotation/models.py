"""Campaign data: campaigns, documents, segments, references, systems, runs and translations.

Every invariant that can be a database constraint is one (unique positions, one translation per run
and segment, …), so a bug in an importer cannot write inconsistent data.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from annotation.protocols import MODE_CHOICES, PROTOCOL_CHOICES, PROTOCOLS, Protocol


class Campaign(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", _("Draft")
        ACTIVE = "active", _("Active")
        CLOSED = "closed", _("Closed")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(_("name"), max_length=200)
    source_language = models.CharField(
        _("source language"), max_length=35, help_text=_("BCP-47 code, e.g. en")
    )
    target_language = models.CharField(
        _("target language"), max_length=35, help_text=_("BCP-47 code, e.g. de")
    )
    description = models.TextField(_("description"), blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="owned_campaigns"
    )
    organizers = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="co_organized_campaigns",
        help_text=_("Co-organizers: they see and manage the campaign like its owner."),
    )
    annotators = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="annotated_campaigns"
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created"]
        constraints = [
            models.CheckConstraint(condition=~Q(name=""), name="campaign_name_not_empty"),
            models.CheckConstraint(
                condition=~Q(source_language="") & ~Q(target_language=""),
                name="campaign_languages_not_empty",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.source_language}→{self.target_language})"

    def get_absolute_url(self) -> str:
        return reverse("campaign_detail", args=[self.id])


class Document(models.Model):
    # No index of its own: the unique indexes (campaign, external_id) and (campaign, position) start
    # with it.
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="documents", db_index=False
    )
    external_id = models.CharField(max_length=200)
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["campaign", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "external_id"], name="document_unique_external_id"
            ),
            models.UniqueConstraint(fields=["campaign", "position"], name="document_unique_pos"),
            models.CheckConstraint(condition=~Q(external_id=""), name="document_id_not_empty"),
        ]

    def __str__(self) -> str:
        return self.external_id


class Segment(models.Model):
    """One source sentence. ``position`` is its 0-based line in the campaign's test set;
    ``position_in_document`` its 0-based place in its document (context for the annotators)."""

    # No index of its own: the unique index (campaign, position) starts with it.
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="segments", db_index=False
    )
    # No index of its own: the unique indexes (document, position) and (document, external_id) start
    # with it.
    document = models.ForeignKey(
        Document, on_delete=models.CASCADE, related_name="segments", db_index=False
    )
    position = models.PositiveIntegerField()
    position_in_document = models.PositiveIntegerField()
    external_id = models.CharField(max_length=200)
    source = models.TextField()

    class Meta:
        ordering = ["campaign", "position"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "position"], name="segment_unique_pos"),
            models.UniqueConstraint(
                fields=["document", "position_in_document"], name="segment_unique_doc_pos"
            ),
            models.UniqueConstraint(
                fields=["document", "external_id"], name="segment_unique_external_id"
            ),
            models.CheckConstraint(condition=~Q(source=""), name="segment_source_not_empty"),
        ]

    def __str__(self) -> str:
        return f"{self.document_id}:{self.external_id}"


class Reference(models.Model):
    """A human translation of a segment. ``index`` numbers the reference sets (0, 1, …), so that
    reference *i* of every segment came from the same translator or file."""

    # No index of its own: the unique index (segment, index) starts with it.
    segment = models.ForeignKey(
        Segment, on_delete=models.CASCADE, related_name="references", db_index=False
    )
    index = models.PositiveSmallIntegerField()
    label = models.CharField(max_length=200, blank=True)
    text = models.TextField()

    class Meta:
        ordering = ["segment", "index"]
        constraints = [
            models.UniqueConstraint(fields=["segment", "index"], name="reference_unique_index"),
        ]

    def __str__(self) -> str:
        return f"ref{self.index} of {self.segment_id}"


class System(models.Model):
    # No index of its own: the unique index (campaign, name) starts with it.
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="systems", db_index=False
    )
    name = models.CharField(max_length=200)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "name"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "name"], name="system_unique_name"),
            models.CheckConstraint(condition=~Q(name=""), name="system_name_not_empty"),
        ]

    def __str__(self) -> str:
        return self.name


class Run(models.Model):
    """One optimizer run (MultEval's replica) of a system; a system has one or more."""

    # No index of its own: the unique indexes (system, name) and (system, position) start with it.
    system = models.ForeignKey(
        System, on_delete=models.CASCADE, related_name="runs", db_index=False
    )
    name = models.CharField(max_length=200)
    position = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["system", "position"]
        constraints = [
            models.UniqueConstraint(fields=["system", "name"], name="run_unique_name"),
            models.UniqueConstraint(fields=["system", "position"], name="run_unique_pos"),
            models.CheckConstraint(condition=~Q(name=""), name="run_name_not_empty"),
        ]

    def __str__(self) -> str:
        return f"{self.system.name}/{self.name}"


class Translation(models.Model):
    # No index of its own: the unique index (run, segment) starts with it.
    run = models.ForeignKey(
        Run, on_delete=models.CASCADE, related_name="translations", db_index=False
    )
    segment = models.ForeignKey(Segment, on_delete=models.CASCADE, related_name="translations")
    text = models.TextField(blank=True)

    class Meta:
        ordering = ["run", "segment"]
        constraints = [
            models.UniqueConstraint(fields=["run", "segment"], name="translation_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.segment_id}"


class Upload(models.Model):
    """A record of one successful import: who, when, which files, what it added."""

    class Form(models.TextChoices):
        PLAIN = "plain", _("Plain text")
        TABLE = "table", _("TSV / JSONL")
        XML = "xml", _("WMT XML")

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="uploads")
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    form = models.CharField(max_length=10, choices=Form.choices)
    files = models.JSONField(default=list)
    summary = models.JSONField(default=dict)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.get_form_display()} upload to {self.campaign_id} at {self.created:%Y-%m-%d}"


# --------------------------------------------------------------------------------------------
# Annotation: protocol settings, tasks (HITs), items (screens), assignments and judgments.


class ProtocolConfig(models.Model):
    """One protocol a campaign runs, with the organizer's settings. Tasks are built from it."""

    # No index of its own: the unique index (campaign, name) starts with it.
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="protocols", db_index=False
    )
    name = models.CharField(_("name"), max_length=100)
    protocol = models.CharField(_("protocol"), max_length=40, choices=PROTOCOL_CHOICES)
    mode = models.CharField(_("mode"), max_length=20, choices=MODE_CHOICES)
    fluency_first = models.BooleanField(
        _("fluency first"),
        default=False,
        help_text=_("Adequacy and fluency: judge fluency first, before the source is shown."),
    )
    outputs_per_screen = models.PositiveSmallIntegerField(
        _("outputs per screen (k)"),
        default=5,
        validators=[MinValueValidator(1), MaxValueValidator(20)],
    )
    items_per_task = models.PositiveIntegerField(
        _("items per task"), default=100, validators=[MinValueValidator(1)]
    )
    annotations_per_task = models.PositiveSmallIntegerField(
        _("annotators per task"),
        default=1,
        validators=[MinValueValidator(1)],
        help_text=_("How many annotators judge every item (each works through the whole task)."),
    )
    qc_bad_reference = models.PositiveSmallIntegerField(
        _("bad references per 100 items"), default=10, validators=[MaxValueValidator(50)]
    )
    qc_repeat = models.PositiveSmallIntegerField(
        _("repeats per 100 items"), default=5, validators=[MaxValueValidator(50)]
    )
    qc_reference = models.PositiveSmallIntegerField(
        _("references as output per 100 items"), default=5, validators=[MaxValueValidator(50)]
    )
    context_segments = models.PositiveSmallIntegerField(
        _("document context"),
        default=1,
        validators=[MaxValueValidator(10)],
        help_text=_("Neighbouring source segments shown before and after the current one."),
    )
    instructions = models.TextField(_("instructions"), blank=True)
    hold_minutes = models.PositiveIntegerField(
        _("hold time (minutes)"),
        default=120,
        validators=[MinValueValidator(1)],
        help_text=_("A pulled task returns to the pool when its annotator is idle this long."),
    )
    seed = models.PositiveIntegerField(_("seed"), default=12345)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "created"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "name"], name="protocolconfig_unique_name"),
            models.CheckConstraint(
                condition=Q(qc_bad_reference__lte=50)
                & Q(qc_repeat__lte=50)
                & Q(qc_reference__lte=50),
                name="protocolconfig_qc_share",
            ),
            models.CheckConstraint(
                condition=Q(items_per_task__gte=1) & Q(annotations_per_task__gte=1),
                name="protocolconfig_positive_sizes",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.protocol})"

    @property
    def definition(self) -> Protocol:
        return PROTOCOLS[self.protocol]


class TaskBuild(models.Model):
    """One build (or rebuild) of a protocol config's tasks, run by a Celery worker: what the
    setup page shows while it is queued or running, and how it ended. At most one build per
    config is queued or running (a partial unique constraint): a second click joins it."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # No index of its own: taskbuild_config_recent starts with it.
    config = models.ForeignKey(
        ProtocolConfig, on_delete=models.CASCADE, related_name="builds", db_index=False
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    # What the finished build wrote.
    tasks = models.PositiveIntegerField(default=0)
    items = models.PositiveIntegerField(default=0)
    # The requester's language: messages of a failed build are stored in it.
    language = models.CharField(max_length=10, default="en")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    # When the build last moved (created, started, finished). A queued or running build that
    # has not moved for EVALSITE_JOB_STALE_SECONDS is taken for dead, as analysis jobs are.
    progressed = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created"]
        indexes = [models.Index(fields=["config", "-created"], name="taskbuild_config_recent")]
        constraints = [
            models.UniqueConstraint(
                fields=["config"],
                condition=Q(status__in=["queued", "running"]),
                name="taskbuild_one_active",
            ),
        ]

    def __str__(self) -> str:
        return f"build {self.pk} of {self.config_id} ({self.status})"

    @property
    def active(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)


class Task(models.Model):
    """A HIT: an ordered list of items that each of ``annotations_needed`` annotators works
    through on their own. ``slots_taken`` counts live assignments; the check constraint makes
    oversubscription impossible whatever the code does."""

    # No index of its own: the unique index (config, position) starts with it.
    config = models.ForeignKey(
        ProtocolConfig, on_delete=models.CASCADE, related_name="tasks", db_index=False
    )
    position = models.PositiveIntegerField()
    size = models.PositiveIntegerField(help_text="Number of items (kept here for progress bars).")
    annotations_needed = models.PositiveSmallIntegerField()
    slots_taken = models.PositiveSmallIntegerField(default=0)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["config", "position"]
        constraints = [
            models.UniqueConstraint(fields=["config", "position"], name="task_unique_pos"),
            models.CheckConstraint(
                condition=Q(slots_taken__lte=F("annotations_needed")),
                name="task_not_oversubscribed",
            ),
        ]

    def __str__(self) -> str:
        return f"task {self.position + 1} of {self.config}"


class ItemKind(models.TextChoices):
    REAL = "real", _("Real")
    BAD_REFERENCE = "bad_ref", _("Bad reference")
    REPEAT = "repeat", _("Repeat")
    REFERENCE = "reference", _("Reference as output")


class Item(models.Model):
    """One screen of a task. A quality-control item points to the real item it copies."""

    # No index of its own: the unique index (task, position) starts with it.
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="items", db_index=False)
    position = models.PositiveIntegerField()
    kind = models.CharField(max_length=10, choices=ItemKind.choices)
    segment = models.ForeignKey(Segment, on_delete=models.PROTECT, related_name="items")
    # RESTRICT, not PROTECT: a task's QC copies may be deleted together with their originals.
    original = models.ForeignKey(
        "self", on_delete=models.RESTRICT, null=True, blank=True, related_name="copies"
    )

    class Meta:
        ordering = ["task", "position"]
        constraints = [
            models.UniqueConstraint(fields=["task", "position"], name="item_unique_pos"),
            models.CheckConstraint(
                condition=(Q(kind="real") & Q(original__isnull=True))
                | (~Q(kind="real") & Q(original__isnull=False)),
                name="item_qc_points_to_original",
            ),
        ]

    def __str__(self) -> str:
        return f"item {self.position + 1} ({self.kind}) of task {self.task_id}"


class ItemOutput(models.Model):
    """One output shown on a screen, in its slot. ``text`` is what the annotator saw: the
    system's translation, its degraded copy (bad reference) or a human reference."""

    # No index of its own: the unique index (item, position) starts with it.
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="outputs", db_index=False)
    position = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=10, choices=ItemKind.choices)
    translation = models.ForeignKey(
        Translation, on_delete=models.PROTECT, null=True, blank=True, related_name="shown_as"
    )
    system = models.ForeignKey(
        System, on_delete=models.PROTECT, null=True, blank=True, related_name="shown_as"
    )
    run = models.ForeignKey(Run, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    reference = models.ForeignKey(
        Reference, on_delete=models.PROTECT, null=True, blank=True, related_name="shown_as"
    )
    original = models.ForeignKey(
        "self", on_delete=models.RESTRICT, null=True, blank=True, related_name="copies"
    )
    text = models.TextField()

    class Meta:
        ordering = ["item", "position"]
        constraints = [
            models.UniqueConstraint(fields=["item", "position"], name="itemoutput_unique_pos"),
            models.CheckConstraint(
                condition=(Q(kind="reference") & Q(reference__isnull=False))
                | (~Q(kind="reference") & Q(translation__isnull=False) & Q(system__isnull=False)),
                name="itemoutput_has_a_source",
            ),
        ]

    def __str__(self) -> str:
        return f"output {self.position + 1} of item {self.item_id}"


class Assignment(models.Model):
    """An annotator's hold on a task: pulled from the pool or pushed by an organizer."""

    class Status(models.TextChoices):
        ACTIVE = "active", _("In progress")
        DONE = "done", _("Done")
        EXPIRED = "expired", _("Expired")
        RELEASED = "released", _("Released")

    class Origin(models.TextChoices):
        PULL = "pull", _("Taken by the annotator")
        PUSH = "push", _("Assigned by an organizer")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # No index of its own: the unique index (task, annotator) starts with it.
    task = models.ForeignKey(
        Task, on_delete=models.CASCADE, related_name="assignments", db_index=False
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    origin = models.CharField(max_length=10, choices=Origin.choices)
    claimed_at = models.DateTimeField()
    expires_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    items_done = models.PositiveIntegerField(default=0)
    # The item last put on screen and when, so the server measures time per item itself.
    shown_item = models.ForeignKey(
        Item, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    shown_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-claimed_at"]
        constraints = [
            models.UniqueConstraint(fields=["task", "annotator"], name="assignment_unique"),
        ]
        indexes = [models.Index(fields=["status", "expires_at"], name="assignment_expiry")]

    def __str__(self) -> str:
        return f"{self.annotator} on {self.task}"


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


class Invite(models.Model):
    """A link that makes its holder an annotator of a campaign (signed, expiring token)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="invites")
    label = models.CharField(_("label"), max_length=200, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="invites",
    )
    created = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    revoked = models.BooleanField(default=False)
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"invite {self.label or self.pk} to {self.campaign_id}"


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


# --------------------------------------------------------------------------------------------
# Human-judgment analysis: imported judgments and pseudonymous annotator ids in reports.


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
