"""Celery tasks of the metrics app. Tasks take ids or small JSON values, fetch, call a service."""

from __future__ import annotations

from celery import shared_task

from metrics.models import WiringProbe


@shared_task(bind=True, name="metrics.ping")
def ping(self, token: str) -> str:  # type: ignore[no-untyped-def]
    """Write one row, so that a test or an operator can see a worker reach the database."""
    probe, _ = WiringProbe.objects.get_or_create(
        token=token, defaults={"worker_hostname": self.request.hostname or "unknown"}
    )
    return probe.worker_hostname
