"""The Celery application. Settings come from Django's (``CELERY_*``).

Only JSON crosses the broker; tasks acknowledge late and are re-queued when a worker dies, so a
killed worker never loses work; time limits stop runaway computations.
"""

from __future__ import annotations

import os

from celery import Celery

from evalsite.broker import redis_channel_patch

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")

app = Celery("evalsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.update(
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    broker_connection_retry_on_startup=True,
    # A worker that lost Redis keeps trying to reconnect, however long Redis is away (Celery's
    # default gives up after 100 attempts, about an hour, and the worker exits).
    broker_connection_retry=True,
    broker_connection_max_retries=None,
    task_track_started=True,
    result_expires=24 * 3600,
)
app.autodiscover_tasks()
# A worker holding a task when Redis goes away reconnects rather than exiting (evalsite/broker.py).
redis_channel_patch()
