"""The request log: a refusal (403) is one line without a traceback; a 409 or 410 (ordinary
outcomes of annotation) is not logged as a warning at all; a server error keeps its traceback."""

from __future__ import annotations

import logging

import pytest
from django.test import Client
from django.urls import reverse

from evalsite.logfilters import ExpectedAnswers
from tests.factories import PASSWORD, make_campaign, make_user

pytestmark = pytest.mark.django_db


def _record(status: int, exc: BaseException | None) -> logging.LogRecord:
    record = logging.LogRecord(
        "django.request",
        logging.WARNING,
        __file__,
        1,
        "Forbidden (Permission denied): %s",
        ("/x",),
        (type(exc), exc, None) if exc else None,
    )
    record.status_code = status
    return record


def test_the_filter_keeps_4xx_lines_without_tracebacks_and_drops_409_410() -> None:
    keep = _record(403, PermissionError("no"))
    assert ExpectedAnswers().filter(keep) is True
    assert keep.exc_info is None
    assert ExpectedAnswers().filter(_record(409, None)) is False
    assert ExpectedAnswers().filter(_record(410, None)) is False
    error = _record(500, RuntimeError("boom"))
    assert ExpectedAnswers().filter(error) is True
    assert error.exc_info is not None


def test_a_refused_page_logs_one_line(caplog: pytest.LogCaptureFixture) -> None:
    owner = make_user("owner-log", organizer=True)
    campaign = make_campaign(owner=owner)
    annotator = make_user("plain-log")
    client = Client()
    assert client.login(username=annotator.username, password=PASSWORD)
    handler_filter = ExpectedAnswers()
    with caplog.at_level(logging.WARNING, logger="django.request"):
        response = client.get(reverse("campaign_detail", args=[campaign.pk]))
    assert response.status_code == 403
    records = [r for r in caplog.records if r.name == "django.request"]
    assert records
    for record in records:
        assert handler_filter.filter(record)
        assert record.exc_info is None
        assert "Traceback" not in logging.Formatter().format(record)
