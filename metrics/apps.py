from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.db import transaction


def _schedule_after_commit(sender: Any, campaign_id: Any, **kwargs: Any) -> None:
    from metrics.services import analysis_schedule_debounced

    # After the commit, so a worker sees the data; never inside the annotator's request path
    # in a way that could fail it: scheduling swallows broker and cache outages.
    transaction.on_commit(lambda: analysis_schedule_debounced(campaign_id=campaign_id))


class MetricsConfig(AppConfig):
    name = "metrics"
    verbose_name = "Metrics"

    def ready(self) -> None:
        # Register the app's Celery tasks in every process: services send them by name.
        import metrics.tasks  # noqa: F401
        from annotation.analysis.stored import stored_reader_register
        from annotation.signals import campaign_data_changed
        from evalcore.version import evalsite_version, library_versions
        from metrics.stored import human_analysis_stored
        from metrics.tasks import WORKER_RECEIVERS

        # The code and libraries this process loaded, read now (web and worker processes alike;
        # a worker's pool processes inherit them): files changed on disk later are not its code.
        evalsite_version()
        library_versions()
        campaign_data_changed.connect(_schedule_after_commit, dispatch_uid="metrics-schedule")
        # A worker's start-up hooks (a web process never sends these signals).
        for signal, receiver in WORKER_RECEIVERS:
            signal.connect(receiver, dispatch_uid=f"metrics-{receiver.__name__.strip('_')}")
        # The analysis pages show the human analysis this app's background jobs store.
        stored_reader_register(human_analysis_stored)
