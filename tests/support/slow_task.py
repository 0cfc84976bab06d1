"""A task that holds a worker for a while, for the tests of a broker outage: the worker imports
it with ``--include tests.support.slow_task``. It writes a probe row when it starts and one when
it ends, so the test sees from the database where the task is."""

from __future__ import annotations

import time

from celery import shared_task

from metrics.models import WiringProbe


@shared_task(bind=True, name="tests.slow")
def slow(self, token: str, seconds: float) -> str:  # type: ignore[no-untyped-def]
    hostname = self.request.hostname or "unknown"
    WiringProbe.objects.create(token=f"{token}-started", worker_hostname=hostname)
    time.sleep(seconds)
    WiringProbe.objects.create(token=f"{token}-ended", worker_hostname=hostname)
    return hostname
