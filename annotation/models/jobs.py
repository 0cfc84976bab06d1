"""The shape every background job record shares (task builds, judgment imports, analysis jobs):
a status a worker moves from queued through running to done or failed, who asked, when it was
created, started, finished and last moved, and the error of a failed one.

``progressed`` is what ``evalsite.jobs.stale_abandon`` reads: a queued or running job that has
not moved for ``EVALSITE_JOB_STALE_SECONDS`` is taken for dead.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class Job(models.Model):
    """A background job's record (abstract: each kind of job has its table)."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    # When the job last moved (created, started, a step done, finished).
    progressed = models.DateTimeField(default=timezone.now)

    class Meta:
        abstract = True
        ordering = ["-created"]

    @property
    def active(self) -> bool:
        """Queued or running: a worker has it or will take it."""
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)

    def percent_of(self, done: int, total: int) -> int:
        """``done`` of ``total`` steps as a whole percentage; without a count, 100 once the job
        is done and 0 before."""
        if not total:
            return 100 if self.status == self.Status.DONE else 0
        return round(100 * done / total)
