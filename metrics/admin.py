from __future__ import annotations

from django.contrib import admin

from metrics.models import WiringProbe


@admin.register(WiringProbe)
class WiringProbeAdmin(admin.ModelAdmin):
    list_display = ["token", "worker_hostname", "created"]
