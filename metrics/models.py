"""Stored results of background work: analysis jobs, statistics chunks and results.

Every stored number carries the method, parameters, seed and code version that produced it (in
the result's ``params``), so it can be reproduced.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from annotation.models import Campaign, Job, Run, System
from evalcore.scoring import METRIC_NAMES

# Every metric of the scoring core, in its order; an organizer may switch some off.
DEFAULT_METRICS = list(METRIC_NAMES)


def default_metrics() -> list[str]:
    return list(DEFAULT_METRICS)


class MetricSettings(models.Model):
    """What the background analysis computes for a campaign, and how."""

    campaign = models.OneToOneField(
        Campaign, on_delete=models.CASCADE, related_name="metric_settings"
    )
    metrics = models.JSONField(default=default_metrics)
    tokenize = models.CharField(max_length=20, default="13a")
    lowercase = models.BooleanField(default=False)
    # sacreBLEU's options for BLEU, chrF and TER, with sacreBLEU's defaults and meaning
    # (``manage.py evaluate`` offers the same under sacreBLEU's flag names).
    smooth_method = models.CharField(
        max_length=10,
        default="exp",
        choices=[(m, m) for m in ("exp", "floor", "add-k", "none")],
    )
    smooth_value = models.FloatField(null=True, blank=True)
    chrf_char_order = models.PositiveSmallIntegerField(default=6)
    chrf_word_order = models.PositiveSmallIntegerField(default=0)
    chrf_beta = models.PositiveSmallIntegerField(default=2)
    chrf_whitespace = models.BooleanField(default=False)
    ter_case_sensitive = models.BooleanField(default=False)
    ter_no_punct = models.BooleanField(default=False)
    ter_normalized = models.BooleanField(default=False)
    ter_asian_support = models.BooleanField(default=False)
    baseline = models.ForeignKey(
        System, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # The approximate-randomisation trials of the metric analysis. Its resample count and seed
    # are the campaign's one count and seed (``Campaign.analysis_settings``).
    ar_trials = models.PositiveIntegerField(default=10000)
    updated = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"metric settings of {self.campaign_id}"


class AnalysisJob(Job):
    """One run of the background analysis of a campaign, with its progress."""

    class Stage(models.TextChoices):
        WAITING = "waiting", _("Waiting for a worker")
        STATISTICS = "statistics", _("Metric statistics")
        FINALIZE = "finalize", _("Scores, significance and correlations")
        FINISHED = "finished", _("Finished")

    # No index of its own: job_campaign_recent starts with it.
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="analysis_jobs", db_index=False
    )
    stage = models.CharField(max_length=12, choices=Stage.choices, default=Stage.WAITING)
    fingerprint = models.CharField(max_length=64, help_text="Content hash of the inputs.")
    params = models.JSONField(default=dict)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    # False while the broker could not be reached; pending jobs are sent again later.
    dispatched = models.BooleanField(default=False)

    class Meta(Job.Meta):
        indexes = [models.Index(fields=["campaign", "-created"], name="job_campaign_recent")]
        constraints = [
            models.CheckConstraint(
                condition=Q(progress_done__lte=models.F("progress_total")) | Q(progress_total=0),
                name="job_progress_bounded",
            ),
        ]

    def __str__(self) -> str:
        return f"analysis {self.pk} of {self.campaign_id} ({self.status})"

    @property
    def percent(self) -> int:
        return self.percent_of(self.progress_done, self.progress_total)


class StatsChunk(models.Model):
    """Per-segment sufficient statistics of one metric for a range of one run's segments
    (``numpy.save`` bytes, ``(stop - start, n_stats)`` float64)."""

    # No index of its own: statschunk_unique starts with it.
    job = models.ForeignKey(
        AnalysisJob, on_delete=models.CASCADE, related_name="chunks", db_index=False
    )
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="+")
    metric = models.CharField(max_length=30)
    start = models.PositiveIntegerField()
    stop = models.PositiveIntegerField()
    data = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["job", "run", "metric", "start"], name="statschunk_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.metric} of run {self.run_id} [{self.start}:{self.stop}]"


class SegmentScores(models.Model):
    """Sentence-level scores of one metric for one run of a finished job, in test-set order
    (``numpy.save`` bytes of a float64 array): the segment scores behind the corpus scores."""

    # No index of its own: segmentscores_unique starts with it.
    job = models.ForeignKey(
        AnalysisJob, on_delete=models.CASCADE, related_name="segment_scores", db_index=False
    )
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="+")
    metric = models.CharField(max_length=30)
    data = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["job", "run", "metric"], name="segmentscores_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.metric} segment scores of run {self.run_id}"


class AnalysisResult(models.Model):
    """A stored result document (``kind``: metrics, human, correlations) of a finished job."""

    class Kind(models.TextChoices):
        METRICS = "metrics", _("Metrics and significance")
        HUMAN = "human", _("Human judgments")
        CORRELATIONS = "correlations", _("Metric–human correlations")

    # No index of its own: result_latest starts with it.
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="results", db_index=False
    )
    # No index of its own: analysisresult_unique starts with it.
    job = models.ForeignKey(
        AnalysisJob, on_delete=models.CASCADE, related_name="results", db_index=False
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    fingerprint = models.CharField(max_length=64)
    data = models.JSONField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created"]
        constraints = [
            models.UniqueConstraint(fields=["job", "kind"], name="analysisresult_unique"),
        ]
        indexes = [models.Index(fields=["campaign", "kind", "-created"], name="result_latest")]

    def __str__(self) -> str:
        return f"{self.kind} result of {self.campaign_id}"


class WiringProbe(models.Model):
    """A row written by the ``ping`` task: proof that a worker reached the database."""

    token = models.CharField(max_length=64, unique=True)
    worker_hostname = models.CharField(max_length=200)
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"probe {self.token} from {self.worker_hostname}"


class TaskClaim(models.Model):
    """A task of a job that a worker process has started and not finished: written when the
    task starts, deleted when it ends however it ends (done, failed, retried). A claim that
    outlives its task means the process died with it (SIGKILL, the out-of-memory killer, a
    crash). The worker's node name and the start of its main process (``incarnation``) say
    whose it was: a worker that starts again under the same node name sends the tasks of its
    earlier incarnation again at once, instead of leaving them to Redis's visibility timeout,
    and a task whose processes keep dying fails its job after a few starts (``starts``)."""

    # No index of its own: taskclaim_unique starts with it.
    job = models.ForeignKey(AnalysisJob, on_delete=models.CASCADE, related_name="+", db_index=False)
    key = models.CharField(max_length=80, help_text="The task's name and arguments.")
    task = models.CharField(max_length=60)
    args = models.JSONField()
    node = models.CharField(max_length=200)
    incarnation = models.CharField(max_length=32)
    starts = models.PositiveSmallIntegerField(default=1)
    started = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["job", "key"], name="taskclaim_unique")]

    def __str__(self) -> str:
        return f"{self.key} on {self.node} ({self.starts} starts)"
