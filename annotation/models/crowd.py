"""Crowd platforms (Prolific, Mechanical Turk, others): the settings of a crowd invite link and
the workers who came through one, each with the completion code they were shown."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from annotation.models.campaigns import Campaign
from annotation.models.tasks import Assignment, Invite, ProtocolConfig

# A worker id as platforms issue them (Prolific: 24 hex digits; MTurk: about 14 capitals and
# digits), and nothing else: it becomes part of a username and is shown on organizer pages.
WORKER_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"

# A URL query parameter name (PROLIFIC_PID, workerId, pid, …).
PARAMETER_PATTERN = r"^[A-Za-z][A-Za-z0-9_]{0,39}$"

# A completion code the organizer sets, as Prolific shows them (C1A2B3C4); also the
# per-worker codes EvalSite makes.
CODE_PATTERN = r"^[A-Za-z0-9_-]{1,40}$"


class CrowdPlatform(models.TextChoices):
    PROLIFIC = "prolific", _("Prolific")
    MTURK = "mturk", _("Amazon Mechanical Turk")
    OTHER = "other", _("Other platform")


# The URL parameter each platform's workers arrive with, unless the organizer names another.
DEFAULT_PARAMETER = {CrowdPlatform.PROLIFIC: "PROLIFIC_PID", CrowdPlatform.MTURK: "workerId"}


class CompletionRule(models.TextChoices):
    """Which code a worker gets at the end, from the bad-reference test on their own judgments
    (the campaign's analysis settings: test, score space, threshold)."""

    NOT_FAILED = "not_failed", _("Pass code unless the quality test failed")
    PASSED = "passed", _("Pass code only when the quality test passed")
    ALWAYS = "always", _("Pass code for everyone who finishes")


def study_token_new() -> str:
    """A crowd link's study token: 128 random bits, URL-safe (22 characters)."""
    return secrets.token_urlsafe(16)


class CrowdLink(models.Model):
    """The crowd settings of an invite link. Unlike a personal link, one crowd link serves every
    worker of a study: each arrives with their platform's worker id in the URL and gets an
    account of their own, bound to that id."""

    invite = models.OneToOneField(
        Invite, on_delete=models.CASCADE, primary_key=True, related_name="crowd"
    )
    platform = models.CharField(_("platform"), max_length=20, choices=CrowdPlatform.choices)
    id_parameter = models.CharField(
        _("worker id parameter"),
        max_length=40,
        validators=[RegexValidator(PARAMETER_PATTERN)],
    )
    config = models.ForeignKey(
        ProtocolConfig,
        on_delete=models.CASCADE,
        related_name="crowd_links",
        verbose_name=_("protocol"),
    )
    rule = models.CharField(
        _("completion rule"),
        max_length=20,
        choices=CompletionRule.choices,
        default=CompletionRule.NOT_FAILED,
    )
    # Blank: every worker gets a code of their own (pass or fail only EvalSite knows).
    pass_code = models.CharField(
        _("pass code"), max_length=40, blank=True, validators=[RegexValidator(CODE_PATTERN)]
    )
    fail_code = models.CharField(
        _("fail code"), max_length=40, blank=True, validators=[RegexValidator(CODE_PATTERN)]
    )
    # ``{code}`` in it is replaced by the worker's code.
    return_url = models.CharField(_("return URL"), max_length=500, blank=True)
    # The study URL's token (/study/<token>/), stored rather than signed: the URL pasted into
    # the platform stays the same across page loads, task rebuilds, a change of the link's
    # protocol and a new SECRET_KEY. A random secret as hard to guess as a signature.
    study_token = models.CharField(
        max_length=32, unique=True, default=study_token_new, editable=False
    )

    def __str__(self) -> str:
        return f"{self.get_platform_display()} link {self.invite_id}"


class CrowdWorker(models.Model):
    """A platform's worker in a campaign: the account bound to their id, the task they were
    given, and — once they finished it — the completion code they were shown and whether it
    was the pass code. The same id coming back gets the same account."""

    # No index of its own: the unique index (campaign, platform, worker_id) starts with it.
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="crowd_workers", db_index=False
    )
    # The link they last came through; SET_NULL: a completion stays verifiable.
    link = models.ForeignKey(
        CrowdLink, on_delete=models.SET_NULL, null=True, blank=True, related_name="workers"
    )
    platform = models.CharField(max_length=20, choices=CrowdPlatform.choices)
    worker_id = models.CharField(max_length=64, validators=[RegexValidator(WORKER_ID_PATTERN)])
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="crowd_worker"
    )
    assignment = models.ForeignKey(
        Assignment, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    code = models.CharField(max_length=40, blank=True)
    passed = models.BooleanField(null=True)
    # The QC figures the code was decided on (annotation.crowd.qc.CrowdQC.to_json).
    qc = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "platform", "worker_id"], name="crowdworker_unique_id"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.platform}:{self.worker_id} in {self.campaign_id}"
