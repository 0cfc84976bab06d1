"""The analysis page, its report downloads and the API compute a campaign's analysis once for
unchanged inputs: the cache (Redis, as in production) keeps it under a hash of everything the
analysis reads, so a decision, a revised or new judgment, a renamed system or other settings
compute afresh, a renamed annotator shows the new name in a found analysis, and an unreachable
cache only means computing every time. Numbering the
annotators reads one row per annotator, not one per judgment."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.analysis.selectors import campaign_analysis_cached
from annotation.analysis.services import annotator_decision_record, annotator_pseudonyms_ensure
from annotation.analysis.settings import AnalysisSettings
from annotation.models import Judgment, System
from evalcore.human import synthetic_scores
from tests.analysis_factories import build_judged_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(owner):  # type: ignore[no-untyped-def]
    table = synthetic_scores(
        n_annotators=4, n_systems=3, n_segments=20, tasks_per_annotator=2, careless=[3], seed=4
    ).judgments
    built = build_judged_campaign(owner=owner, judgments=table, system_names=["a", "b", "c"])
    # As every caller of the cached analysis does first (the analysis would number them itself,
    # and then be kept under the key of the campaign before they were numbered).
    annotator_pseudonyms_ensure(campaign=built.campaign)
    return built


def analysed(campaign: Any, settings: AnalysisSettings) -> tuple[dict[str, Any], int]:
    """The analysis as the API shows it, and how many queries it took."""
    with CaptureQueriesContext(connection) as queries:
        analysis = campaign_analysis_cached(campaign=campaign, settings=settings)
    return analysis.to_json(), len(queries)


def test_unchanged_inputs_are_analysed_once_and_changes_compute_afresh(judged, owner) -> None:  # type: ignore[no-untyped-def]
    campaign, settings = judged.campaign, AnalysisSettings()
    first, computing = analysed(campaign, settings)
    again, finding = analysed(campaign, settings)
    assert again == first
    # Finding it again takes the key's few aggregate queries and one for the usernames;
    # computing takes many more.
    assert finding == 7
    assert computing > finding

    # Other settings are another analysis.
    stricter, queries = analysed(campaign, AnalysisSettings(threshold=0.001))
    assert queries == computing
    assert stricter["settings"]["threshold"] == 0.001

    # An organizer's decision: the excluded annotator leaves the system scores.
    annotator_decision_record(
        campaign=campaign,
        annotator=judged.users[0],
        included=False,
        reason="test",
        decided_by=owner,
    )
    decided, queries = analysed(campaign, settings)
    assert queries == computing
    assert decided != first

    # A revised judgment, and a renamed system.
    Judgment.objects.filter(pk=Judgment.objects.order_by("pk").values("pk")[:1]).update(revision=2)
    assert analysed(campaign, settings)[1] == computing
    System.objects.filter(pk=judged.systems[0].pk).update(name="renamed")
    renamed, queries = analysed(campaign, settings)
    assert queries == computing
    assert "renamed" in str(renamed)
    assert analysed(campaign, settings) == (renamed, finding)


def test_a_found_analysis_shows_the_current_usernames(judged) -> None:  # type: ignore[no-untyped-def]
    campaign, settings = judged.campaign, AnalysisSettings()
    first, computing = analysed(campaign, settings)
    renamed_user = judged.users[1]
    old_name = renamed_user.username
    names = {a["username"] for c in first["criteria"] for a in c["annotators"]}
    assert old_name in names

    type(renamed_user).objects.filter(pk=renamed_user.pk).update(username="renamed-annotator")
    again, queries = analysed(campaign, settings)
    assert queries < computing  # found, not computed: the rename is not an input
    names = {a["username"] for c in again["criteria"] for a in c["annotators"]}
    assert "renamed-annotator" in names
    assert old_name not in names
    # Nothing else differs from the first analysis.
    for criterion in again["criteria"]:
        for annotator in criterion["annotators"]:
            if annotator["annotator_id"] == renamed_user.pk:
                annotator["username"] = old_name
    assert again == first


def test_without_a_reachable_cache_the_analysis_is_computed(judged, settings, caplog) -> None:  # type: ignore[no-untyped-def]
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    expected, computing = analysed(judged.campaign, AnalysisSettings())
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
    assert analysed(judged.campaign, AnalysisSettings()) == (expected, computing)
    assert "analysis cache unreachable" in caplog.text


def test_numbering_the_annotators_reads_one_row_per_annotator(judged) -> None:  # type: ignore[no-untyped-def]
    with CaptureQueriesContext(connection) as queries:
        numbers = annotator_pseudonyms_ensure(campaign=judged.campaign)
    assert sorted(numbers) == sorted(u.pk for u in judged.users)
    distinct = [q["sql"] for q in queries if "DISTINCT" in q["sql"]]
    assert len(distinct) == 1
    with connection.cursor() as cursor:
        cursor.execute(distinct[0])
        rows = cursor.fetchall()
    # The model's ordering (assignment, item position) would make it one row per judgment.
    assert len(rows) == len(judged.users) < Judgment.objects.count()
