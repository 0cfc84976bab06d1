"""Tutorials: training items an organizer defines for a protocol, each with what a good answer
looks like and the feedback an annotator reads after answering it; the rule that decides whether
an annotator who fails may go on to the real items; each annotator's run through the tutorial and
their answers. Tutorial answers are rows of their own, never judgments: no analysis reads them."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotation.models.tasks import ProtocolConfig


class TutorialRule(models.Model):
    """What happens after the last tutorial item: an annotator passes with at least
    ``pass_at_least`` items answered as expected (all of them when it is empty); one who fails
    continues anyway, starts the tutorial again (at most ``attempts`` times in all) or is
    stopped with ``stop_message``."""

    class OnFail(models.TextChoices):
        CONTINUE = "continue", _("Continue to the real items anyway")
        RETRY = "retry", _("Take the tutorial again")
        STOP = "stop", _("Stop with a message")

    config = models.OneToOneField(
        ProtocolConfig, on_delete=models.CASCADE, primary_key=True, related_name="tutorial_rule"
    )
    pass_at_least = models.PositiveSmallIntegerField(
        _("items to pass"),
        null=True,
        blank=True,
        help_text=_("How many tutorial items must be answered as expected; empty: all of them."),
    )
    on_fail = models.CharField(
        _("an annotator who fails"), max_length=10, choices=OnFail.choices, default=OnFail.CONTINUE
    )
    attempts = models.PositiveSmallIntegerField(
        _("attempts"),
        default=2,
        validators=[MinValueValidator(1), MaxValueValidator(10)],
        help_text=_("With “take the tutorial again”: how many attempts in all before a stop."),
    )
    stop_message = models.TextField(
        _("message to an annotator who is stopped"),
        blank=True,
        help_text=_("Empty: a standard message."),
    )
    attention_check = models.BooleanField(
        _("attention check in the tutorial"),
        default=False,
        help_text=_(
            "Add a bad-reference copy of a tutorial item (a phrase replaced from another "
            "text) at the end of the tutorial; failed, its feedback names the damaged part."
        ),
    )

    def __str__(self) -> str:
        return f"tutorial rule of {self.config_id}"


class TutorialItem(models.Model):
    """One tutorial screen: a source, one or more outputs and a reference (the config's mode
    decides which are shown), none of them campaign data; ``expectation`` is what a good answer
    does (``annotation.tutorial.expectations``) and ``feedback`` the organizer's words about it.
    An attention check (``original`` set) is a degraded copy of another tutorial item."""

    config = models.ForeignKey(
        ProtocolConfig, on_delete=models.CASCADE, related_name="tutorial_items", db_index=False
    )
    position = models.PositiveSmallIntegerField()
    source = models.TextField(blank=True)
    reference = models.TextField(blank=True)
    outputs = models.JSONField()
    expectation = models.JSONField(default=dict)
    feedback = models.TextField(blank=True)
    original = models.ForeignKey(
        "self", on_delete=models.CASCADE, null=True, blank=True, related_name="checks"
    )

    class Meta:
        ordering = ["config", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["config", "position"], name="tutorialitem_unique_position"
            ),
        ]

    def __str__(self) -> str:
        return f"tutorial item {self.position + 1} of {self.config_id}"

    @property
    def is_check(self) -> bool:
        return self.original_id is not None


class TutorialRun(models.Model):
    """An annotator's way through a protocol's tutorial (once per protocol, before the real
    items of whichever task they hold): the attempt, how far it went, how many items met their
    expectation, and how it ended."""

    class Status(models.TextChoices):
        ACTIVE = "active", _("In progress")
        PASSED = "passed", _("Passed")
        CONTINUED = "continued", _("Failed, continued")
        STOPPED = "stopped", _("Failed, stopped")

    # No index of its own: the unique index (config, annotator) starts with it.
    config = models.ForeignKey(
        ProtocolConfig, on_delete=models.CASCADE, related_name="tutorial_runs", db_index=False
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="tutorial_runs"
    )
    attempt = models.PositiveSmallIntegerField(default=1)
    items_done = models.PositiveSmallIntegerField(default=0)
    items_met = models.PositiveSmallIntegerField(default=0)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    started = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["config", "-started"]
        constraints = [
            models.UniqueConstraint(fields=["config", "annotator"], name="tutorialrun_unique"),
            models.CheckConstraint(
                condition=Q(items_met__lte=models.F("items_done")), name="tutorialrun_met_le_done"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.annotator} in the tutorial of {self.config_id} ({self.status})"

    @property
    def may_continue(self) -> bool:
        return self.status in (self.Status.PASSED, self.Status.CONTINUED)


class TutorialAnswer(models.Model):
    """One answer to a tutorial item in one attempt, and whether it met the expectation. The
    item may be edited or removed later: ``position`` and ``met`` keep what was decided."""

    # No index of its own: the unique index (run, attempt, position) starts with it.
    run = models.ForeignKey(
        TutorialRun, on_delete=models.CASCADE, related_name="answers", db_index=False
    )
    item = models.ForeignKey(
        TutorialItem, on_delete=models.SET_NULL, null=True, blank=True, related_name="answers"
    )
    attempt = models.PositiveSmallIntegerField()
    position = models.PositiveSmallIntegerField()
    submission_id = models.UUIDField(unique=True)
    answer = models.JSONField()
    met = models.BooleanField()
    # What the answer missed, as the feedback said it (shown again for a resent submit).
    notes = models.JSONField(default=list)
    submitted_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "attempt", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "attempt", "position"], name="tutorialanswer_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"answer to tutorial item {self.position + 1} ({self.run_id})"
