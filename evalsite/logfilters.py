"""Filters for the log configuration in ``settings.LOGGING``."""

from __future__ import annotations

import logging

# Answers that are outcomes of ordinary use, not faults: an answer revised in another window or
# sent for an item no longer current, a hold that ended, a closed campaign (409), a finished
# task or a used invite link (410). Django's request log would report each as a warning.
EXPECTED_STATUSES = frozenset({409, 410})


class ExpectedAnswers(logging.Filter):
    """Drops ``django.request``'s warnings about 409 and 410 answers, and the tracebacks of the
    other 4xx warnings (a 403 is one line). With 50 annotators at
    work, stale and repeated submits gave a warning every few requests and buried the ones that
    matter; gunicorn's access log still lists every answer with its status."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if status in EXPECTED_STATUSES:
            return False
        # A refusal (403: not an organizer, another organizer's campaign, a bad CSRF token) is
        # an answer, not a fault: one line, without the traceback of the PermissionDenied that
        # produced it (which buried the development server's log).
        if status is not None and 400 <= status < 500:
            record.exc_info = None
            record.exc_text = None
        return True
