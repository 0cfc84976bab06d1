"""The automatic refresh chain on a real Celery worker process and Redis: a judgment submit or a
judgment import marks the results stale and, after its commit, schedules a recomputation; a
burst of submits within the debounce window schedules one, not one per submit; a change after
the window schedules again; and each scheduled request leaves results that describe the data.
A web process that has seen the window's key does not ask the cache again until shortly before
it expires."""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path

import pytest
from django.core.cache import cache

from annotation.analysis.services import annotator_decision_record
from annotation.campaigns.uploads import UploadFile
from annotation.judging.screens import annotation_screen
from annotation.judging.services import judgment_record
from annotation.judgment_import.services import judgments_import
from annotation.tasking.services import task_assign_next
from metrics import services
from metrics.models import AnalysisJob
from metrics.queries import dashboard_status
from metrics.services import analysis_schedule_debounced
from tests.dashboard_factories import analysis_run_sync
from tests.factories import full_answer, make_config, make_rich_campaign
from tests.support.workers import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

WINDOW = 4  # seconds: the debounce window (and delay) for this test; 60 by default


def requests_received(log: Path) -> int:
    """How many automatic analysis requests the worker has received."""
    return len(re.findall(r"metrics\.analysis_request\[[^\]]+\] received", log.read_text()))


def wait_for_requests(log: Path, n: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while requests_received(log) < n:
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)


def next_job(campaign, known: list[AnalysisJob], timeout: float = 60) -> AnalysisJob:  # type: ignore[no-untyped-def]
    """The job a scheduled request creates (once its delay has passed), when it has finished."""
    deadline = time.monotonic() + timeout
    while True:
        job = (
            AnalysisJob.objects.filter(campaign=campaign)
            .exclude(pk__in=[k.pk for k in known])
            .first()
        )
        if job is not None:
            return wait_for(job.pk, timeout=120)
        assert time.monotonic() < deadline, "no new analysis job"
        time.sleep(0.2)


def test_submits_and_imports_schedule_one_debounced_recomputation_per_window(
    celery_worker_process, owner, annotator, settings, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    campaign.annotators.add(annotator)
    config = make_config(campaign, "adequacy_fluency", items_per_task=10, annotations_per_task=2)
    assignment = task_assign_next(config=config, annotator=annotator)
    first = analysis_run_sync(
        campaign=campaign, metrics=("bleu", "chrf"), bootstrap_samples=50, ar_trials=50
    )
    assert dashboard_status(campaign=campaign)["stale"] is False

    settings.EVALSITE_AUTO_ANALYSIS = True
    settings.EVALSITE_ANALYSIS_DEBOUNCE_SECONDS = WINDOW
    cache.delete(f"evalsite:analysis-scheduled:{campaign.pk}")
    celery_worker_process(name="scheduler")
    log = tmp_path / "worker-scheduler.log"

    def submit() -> None:
        screen = annotation_screen(assignment_id=assignment.pk, annotator=annotator)
        judgment_record(
            assignment_id=assignment.pk,
            annotator=annotator,
            item_id=screen.item.pk,
            revision_seen=0,
            submission_id=uuid.uuid4(),
            answer=full_answer(screen.item),
        )

    # A burst of five submits, each committed on its own, within the window.
    started = time.monotonic()
    submit()
    assert dashboard_status(campaign=campaign)["stale"] is True
    for _ in range(4):
        submit()
    assert time.monotonic() - started < WINDOW
    wait_for_requests(log, 1)
    second = next_job(campaign, [first])
    assert second.status == AnalysisJob.Status.DONE, second.error
    # The one request came after the whole burst: its results describe all five judgments.
    assert dashboard_status(campaign=campaign)["stale"] is False
    time.sleep(WINDOW + 1)
    assert requests_received(log) == 1
    assert AnalysisJob.objects.filter(campaign=campaign).count() == 2

    # After the window, a judgment import schedules again.
    rows = "annotator\tsystem\tsegment\ttype\tscore\nw1\tnmt-large\t1\tSYSTEM\t60\n"
    rows += "w1\tnmt-base\t2\tSYSTEM\t40\n"
    judgments_import(campaign=campaign, upload=UploadFile("past.tsv", rows.encode()), user=owner)
    assert dashboard_status(campaign=campaign)["stale"] is True
    wait_for_requests(log, 2)
    third = next_job(campaign, [first, second])
    assert third.status == AnalysisJob.Status.DONE, third.error
    assert dashboard_status(campaign=campaign)["stale"] is False

    # And so does a submit after the next window.
    time.sleep(WINDOW + 1)
    submit()
    assert dashboard_status(campaign=campaign)["stale"] is True
    wait_for_requests(log, 3)
    fourth = next_job(campaign, [first, second, third])
    assert fourth.status == AnalysisJob.Status.DONE, fourth.error
    assert dashboard_status(campaign=campaign)["stale"] is False
    assert requests_received(log) == 3

    # An organizer's include/exclude decision changes the results too: it schedules as well.
    time.sleep(WINDOW + 1)
    annotator_decision_record(
        campaign=campaign, annotator=annotator, included=False, reason="test", decided_by=owner
    )
    assert dashboard_status(campaign=campaign)["stale"] is True
    wait_for_requests(log, 4)
    fifth = next_job(campaign, [first, second, third, fourth])
    assert fifth.status == AnalysisJob.Status.DONE, fifth.error
    assert dashboard_status(campaign=campaign)["stale"] is False


def test_a_process_that_saw_the_debounce_key_skips_the_cache_until_shortly_before_it_expires(
    settings,  # type: ignore[no-untyped-def]
) -> None:
    settings.EVALSITE_AUTO_ANALYSIS = True
    settings.EVALSITE_ANALYSIS_DEBOUNCE_SECONDS = 30
    campaign_id = f"memo-{uuid.uuid4()}"
    key = f"evalsite:analysis-scheduled:{campaign_id}"
    try:
        # Another process scheduled the analysis; its key says it expires in 30 s.
        cache.set(key, time.time() + 30, timeout=30)
        assert analysis_schedule_debounced(campaign_id=campaign_id) is False
        left = services._SCHEDULED_UNTIL[key] - time.monotonic()
        assert 30 - services.SCHEDULE_CLOCK_MARGIN - 1 < left <= 30 - services.SCHEDULE_CLOCK_MARGIN
        # The cache loses the key (Redis restarted empty): this process does not ask it again
        # before then — had it asked, it would have set the key and scheduled an analysis.
        cache.delete(key)
        assert analysis_schedule_debounced(campaign_id=campaign_id) is False
        assert cache.get(key) is None

        # A key within the clock margin of its expiry is not trusted: the next judgment asks.
        services._SCHEDULED_UNTIL.pop(key)
        cache.set(key, time.time() + services.SCHEDULE_CLOCK_MARGIN - 0.5, timeout=5)
        assert analysis_schedule_debounced(campaign_id=campaign_id) is False
        assert key not in services._SCHEDULED_UNTIL
        # Nor is a key set by an earlier version (its value is 1, no expiry).
        cache.set(key, 1, timeout=30)
        assert analysis_schedule_debounced(campaign_id=campaign_id) is False
        assert key not in services._SCHEDULED_UNTIL
    finally:
        cache.delete(key)
        services._SCHEDULED_UNTIL.pop(key, None)
