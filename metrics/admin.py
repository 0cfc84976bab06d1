from __future__ import annotations

from django.contrib import admin

from metrics.models import (
    AnalysisJob,
    AnalysisResult,
    MetricSettings,
    SegmentScores,
    StatsChunk,
    TaskClaim,
    WiringProbe,
)


@admin.register(MetricSettings)
class MetricSettingsAdmin(admin.ModelAdmin):
    list_display = ["campaign", "baseline", "ar_trials", "updated"]
    raw_id_fields = ["campaign", "baseline"]


@admin.register(AnalysisJob)
class AnalysisJobAdmin(admin.ModelAdmin):
    list_display = [
        "pk",
        "campaign",
        "status",
        "stage",
        "progress_done",
        "progress_total",
        "created",
    ]
    list_filter = ["status", "stage"]
    readonly_fields = ["fingerprint", "params", "created", "started", "finished"]
    raw_id_fields = ["campaign", "requested_by"]


@admin.register(StatsChunk)
class StatsChunkAdmin(admin.ModelAdmin):
    list_display = ["job", "run", "metric", "start", "stop"]
    raw_id_fields = ["job", "run"]
    exclude = ["data"]


@admin.register(SegmentScores)
class SegmentScoresAdmin(admin.ModelAdmin):
    list_display = ["job", "run", "metric"]
    raw_id_fields = ["job", "run"]
    exclude = ["data"]


@admin.register(AnalysisResult)
class AnalysisResultAdmin(admin.ModelAdmin):
    list_display = ["campaign", "kind", "job", "created"]
    list_filter = ["kind"]
    raw_id_fields = ["campaign", "job"]


@admin.register(WiringProbe)
class WiringProbeAdmin(admin.ModelAdmin):
    list_display = ["token", "worker_hostname", "created"]


@admin.register(TaskClaim)
class TaskClaimAdmin(admin.ModelAdmin):
    """Tasks running now, and those whose worker process died with them."""

    list_display = ["key", "job", "node", "starts", "started"]
    list_filter = ["node"]
    raw_id_fields = ["job"]
