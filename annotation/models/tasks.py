"""Annotation tasks: protocol configs, their builds, tasks, items and the outputs they show,
assignments and invites."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from annotation.models.campaigns import Campaign, Reference, Run, Segment, System, Translation
from annotation.models.jobs import Job
from annotation.protocols import (
    MODE_CHOICES,
    PROTOCOLS,
    SCORES_SETTING,
    SCORES_STANDARDISED,
    Protocol,
    protocol_choices,
)


class ProtocolConfig(models.Model):
    """One protocol a campaign runs, with the organizer's settings. Tasks are built from it."""

    # No index of its own: the unique index (campaign, name) starts with it.
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="protocols", db_index=False
    )
    name = models.CharField(_("name"), max_length=100)
    protocol = models.CharField(_("protocol"), max_length=40, choices=protocol_choices)
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
        _("bad references per 100 items"), default=12, validators=[MaxValueValidator(50)]
    )
    qc_repeat = models.PositiveSmallIntegerField(
        _("repeats per 100 items"), default=4, validators=[MaxValueValidator(50)]
    )
    qc_reference = models.PositiveSmallIntegerField(
        _("references as output per 100 items"), default=4, validators=[MaxValueValidator(50)]
    )
    context_segments = models.PositiveSmallIntegerField(
        _("document context"),
        default=1,
        validators=[MaxValueValidator(10)],
        help_text=_("Neighbouring source segments shown before and after the current one."),
    )

    class Screen(models.TextChoices):
        SEGMENT = "segment", _("One segment per screen")
        DOCUMENT = "document", _("Document: consecutive segments on one screen")

    # Document screens (WMT's document-level DA and ESA in Appraise): one system's translation
    # of consecutive segments of one document, one answer per segment. Each segment stays an
    # item of its own (Item.screen groups them), so judgments, QC and analysis stay per segment.
    screen = models.CharField(
        _("screen"),
        max_length=10,
        choices=Screen.choices,
        default=Screen.SEGMENT,
        help_text=_(
            "Direct assessment, ESA and MQM can show a document (or a window of it) on one "
            "screen, in one system's translation, one answer per segment."
        ),
    )
    document_window = models.PositiveSmallIntegerField(
        _("segments per document screen"),
        default=0,
        validators=[MaxValueValidator(100)],
        help_text=_(
            "0: the whole document. Otherwise longer documents are cut into windows of at "
            "most this many segments, of near-equal length."
        ),
    )
    # Appraise's ESA campaigns end a document with a 0–100 score of the whole document; so
    # may any kind's document screens (rows of annotation.models.DocumentJudgment).
    document_score = models.BooleanField(
        _("document-level score"),
        default=False,
        help_text=_(
            "Document screens: after its segments, the annotator also scores the whole "
            "document (or window) shown, from 0 to 100."
        ),
    )
    # Identical outputs of a segment (the same text after NFC and whitespace normalisation)
    # shown once, the answer credited to every system and run that produced them
    # (ItemOutputCredit; annotation.tasking.merging).
    merge_identical = models.BooleanField(
        _("merge identical outputs"),
        default=True,
        help_text=_(
            "Show identical translations of a segment once and credit the answer to every "
            "system that produced them."
        ),
    )
    instructions = models.TextField(_("instructions"), blank=True)
    hold_minutes = models.PositiveIntegerField(
        _("hold time (minutes)"),
        default=120,
        validators=[MinValueValidator(1)],
        help_text=_("A pulled task returns to the pool when its annotator is idle this long."),
    )
    seed = models.PositiveIntegerField(_("seed"), default=12345)

    class Allocation(models.TextChoices):
        PREBUILT = "prebuilt", _("Prebuilt tasks")
        ADAPTIVE = "adaptive", _("Pull: adaptive")
        TOP_K = "top_k", _("Pull: the top k systems")

    # Pull modes (annotation/tasking/pull.py): a task is built with a first batch of screens and
    # gains the next batch when its annotator reaches its end, the systems chosen then from the
    # judgments stored so far.
    allocation = models.CharField(
        _("allocation"),
        max_length=10,
        choices=Allocation.choices,
        default=Allocation.PREBUILT,
        help_text=_(
            "Prebuilt: every screen is planned when the tasks are built. Pull: each next screen "
            "goes to the systems whose order is least certain (adaptive) or to the k best."
        ),
    )
    allocation_budget = models.PositiveIntegerField(
        _("judgment budget"),
        default=0,
        help_text=_("Pull modes: stop after this many judgments of real outputs (0: no budget)."),
    )
    allocation_top_k = models.PositiveSmallIntegerField(
        _("top k"), default=3, validators=[MinValueValidator(1)]
    )
    allocation_level = models.FloatField(
        _("decision level"),
        default=0.05,
        validators=[MinValueValidator(0.0001), MaxValueValidator(0.5)],
        help_text=_(
            "Pull: adaptive stops when every adjacent pair of the current ranking is decided at "
            "this level (an anytime-valid test: tied systems are declared apart at most this "
            "often, however often the pair is tested)."
        ),
    )
    # The kind's own settings (MQM: {"weights": {…}}; Protocol.settings_json writes them).
    # Set when the config is created and not changed after: every judgment of an MQM config
    # stores the weights its score was computed with anyway.
    settings = models.JSONField(_("settings"), default=dict, blank=True)
    # Whether the config has tutorial items (annotation.tutorial keeps it current): the
    # annotation page and the submit read it with the config, so a protocol without a
    # tutorial costs them no query.
    has_tutorial = models.BooleanField(default=False, editable=False)
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
            models.CheckConstraint(
                condition=Q(document_score=False) | Q(screen="document"),
                name="protocolconfig_document_score_on_documents",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.protocol})"

    @property
    def shows_documents(self) -> bool:
        return self.screen == self.Screen.DOCUMENT

    @property
    def asks_document_score(self) -> bool:
        return self.shows_documents and self.document_score

    @property
    def scores_standardised(self) -> bool:
        """Whether the stored scores are z-scores already (imported from a release with
        standardised scores only): the analysis takes them as given."""
        return (self.settings or {}).get(SCORES_SETTING) == SCORES_STANDARDISED

    @property
    def definition(self) -> Protocol:
        """The kind as this config runs it, with its settings (MQM's weights)."""
        return PROTOCOLS[self.protocol].configured(self.settings or {})


class TaskBuild(Job):
    """One build (or rebuild) of a protocol config's tasks, run by a Celery worker: what the
    setup page shows while it is queued or running, and how it ended. At most one build per
    config is queued or running (a partial unique constraint): a second click joins it."""

    # No index of its own: taskbuild_config_recent starts with it.
    config = models.ForeignKey(
        ProtocolConfig, on_delete=models.CASCADE, related_name="builds", db_index=False
    )
    # What the finished build wrote.
    tasks = models.PositiveIntegerField(default=0)
    items = models.PositiveIntegerField(default=0)
    # What merging identical outputs saved: screens and judged outputs, counting every
    # annotator of a task (0 when the config does not merge or nothing was identical).
    saved_screens = models.PositiveIntegerField(default=0)
    saved_judgments = models.PositiveIntegerField(default=0)
    # The requester's language: messages of a failed build are stored in it.
    language = models.CharField(max_length=10, default="en")

    class Meta(Job.Meta):
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
    """One segment's screen of a task, or one segment of a document screen. A quality-control
    item points to the real item it copies."""

    # No index of its own: the unique index (task, position) starts with it.
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="items", db_index=False)
    position = models.PositiveIntegerField()
    kind = models.CharField(max_length=10, choices=ItemKind.choices)
    segment = models.ForeignKey(Segment, on_delete=models.PROTECT, related_name="items")
    # RESTRICT, not PROTECT: a task's QC copies may be deleted together with their originals.
    original = models.ForeignKey(
        "self", on_delete=models.RESTRICT, null=True, blank=True, related_name="copies"
    )
    # On a document screen: the position of the screen's first item (the screen's items are
    # consecutive, in document order). Null: the item is a screen of its own.
    screen = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["task", "position"]
        constraints = [
            models.UniqueConstraint(fields=["task", "position"], name="item_unique_pos"),
            models.CheckConstraint(
                condition=(Q(kind="real") & Q(original__isnull=True))
                | (~Q(kind="real") & Q(original__isnull=False)),
                name="item_qc_points_to_original",
            ),
            models.CheckConstraint(
                condition=Q(screen__isnull=True) | Q(screen__lte=F("position")),
                name="item_screen_starts_before",
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


class ItemOutputCredit(models.Model):
    """Another system run credited with a shown output's answer: it produced the same text
    (after NFC and whitespace normalisation) as the output's own system and run, so the
    output was shown once for both. The analysis expands each answer to every credit."""

    # No index of its own: the unique index (output, system) starts with it.
    output = models.ForeignKey(
        ItemOutput, on_delete=models.CASCADE, related_name="credits", db_index=False
    )
    system = models.ForeignKey(System, on_delete=models.PROTECT, related_name="+")
    run = models.ForeignKey(Run, on_delete=models.PROTECT, related_name="+")
    translation = models.ForeignKey(Translation, on_delete=models.PROTECT, related_name="+")

    class Meta:
        ordering = ["output", "system"]
        constraints = [
            models.UniqueConstraint(fields=["output", "system"], name="itemoutputcredit_unique"),
        ]

    def __str__(self) -> str:
        return f"credit of output {self.output_id} to system {self.system_id}"


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
