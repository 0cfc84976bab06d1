"""Filters for the log configuration in ``settings.LOGGING``."""

from __future__ import annotations

import logging

# Answers that are outcomes of ordinary use, not faults: an answer revised in another window or
# sent for an item no longer current, a hold that ended, a closed campaign (409), a finished
# task or a used invite link (410). Django's request log would report each as a warning.
EXPECTED_STATUSES = frozenset({409, 410})


class ExpectedAnswers(logging.Filter):
    """Drops ``django.request``'s warnings about 409 and 410 answers. With 50 annotators at
    work, stale and repeated submits gave a warning every few requests and buried the ones that
    matter; gunicorn's access log still lists every answer with its status."""

    def filter(self, record: logging.LogRecord) -> bool:
        return getattr(record, "status_code", None) not in EXPECTED_STATUSES
