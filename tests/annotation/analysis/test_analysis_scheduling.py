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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache

from annotation.analysis.services import annotator_decision_record
from annotation.campaigns.uploads import UploadFile
from annotation.judging.screens import annotation_screen
from annotation.judging.services import judgment_record
from annotation.judgment_import.services import judgments_import
from annotation.models import Campaign
from annotation.tasking.services import task_assign_next
from metrics import services
from metrics.models import AnalysisJob
from metrics.queries import dashboard_status
from metrics.services import analysis_schedule_debounced
from tests.dashboard_factories import analysis_run_sync
from tests.factories import full_answer, make_config, make_rich_campaign
from tests.support.workers import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

# Seconds: the debounce window (and delay) of these tests; 60 by default. A burst of five
# submits must fit in its window on a loaded machine.
WINDOW = 2
BURST_WINDOW = 4


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


@dataclass
class Scheduling:
    """A judged campaign whose stored results are current, automatic scheduling on and a real
    worker running; its debounce window is each test's."""

    campaign: Campaign
    annotator: Any
    assignment: Any
    jobs: list[AnalysisJob]
    log: Path

    def submit(self) -> None:
        screen = annotation_screen(assignment_id=self.assignment.pk, annotator=self.annotator)
        judgment_record(
            assignment_id=self.assignment.pk,
            annotator=self.annotator,
            item_id=screen.item.pk,
            revision_seen=0,
            submission_id=uuid.uuid4(),
            answer=full_answer(screen.item),
        )

    def recomputed(self, requests: int) -> None:
        """The change just made marked the results stale, the worker received its ``requests``-th
        request, and the job it made finished with results that describe the data."""
        assert dashboard_status(campaign=self.campaign)["stale"] is True
        wait_for_requests(self.log, requests)
        job = next_job(self.campaign, self.jobs)
        assert job.status == AnalysisJob.Status.DONE, job.error
        self.jobs.append(job)
        assert dashboard_status(campaign=self.campaign)["stale"] is False


@pytest.fixture
def scheduling(celery_worker_process, owner, annotator, settings, tmp_path: Path) -> Scheduling:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    campaign.annotators.add(annotator)
    config = make_config(campaign, "adequacy_fluency", items_per_task=10, annotations_per_task=2)
    assignment = task_assign_next(config=config, annotator=annotator)
    first = analysis_run_sync(
        campaign=campaign, metrics=("bleu", "chrf"), resamples=50, ar_trials=50
    )
    assert dashboard_status(campaign=campaign)["stale"] is False
    settings.EVALSITE_AUTO_ANALYSIS = True
    settings.EVALSITE_ANALYSIS_DEBOUNCE_SECONDS = WINDOW
    cache.delete(f"evalsite:analysis-scheduled:{campaign.pk}")
    celery_worker_process(name="scheduler")
    return Scheduling(campaign, annotator, assignment, [first], tmp_path / "worker-scheduler.log")


def test_a_burst_of_submits_schedules_one_recomputation_per_window(scheduling, settings) -> None:  # type: ignore[no-untyped-def]
    settings.EVALSITE_ANALYSIS_DEBOUNCE_SECONDS = BURST_WINDOW
    # Five submits, each committed on its own, within the window.
    started = time.monotonic()
    for _ in range(5):
        scheduling.submit()
    assert time.monotonic() - started < BURST_WINDOW
    # The one request came after the whole burst: its results describe all five judgments.
    scheduling.recomputed(requests=1)
    time.sleep(BURST_WINDOW + 1)
    assert requests_received(scheduling.log) == 1
    assert AnalysisJob.objects.filter(campaign=scheduling.campaign).count() == 2


def test_a_submit_after_the_window_schedules_again(scheduling) -> None:  # type: ignore[no-untyped-def]
    scheduling.submit()
    scheduling.recomputed(requests=1)
    time.sleep(WINDOW + 1)
    scheduling.submit()
    scheduling.recomputed(requests=2)
    assert requests_received(scheduling.log) == 2


def test_a_judgment_import_schedules_a_recomputation(scheduling, owner) -> None:  # type: ignore[no-untyped-def]
    rows = "annotator\tsystem\tsegment\ttype\tscore\nw1\tnmt-large\t1\tSYSTEM\t60\n"
    rows += "w1\tnmt-base\t2\tSYSTEM\t40\n"
    judgments_import(
        campaign=scheduling.campaign, upload=UploadFile("past.tsv", rows.encode()), user=owner
    )
    scheduling.recomputed(requests=1)


def test_an_include_or_exclude_decision_schedules_a_recomputation(scheduling, owner) -> None:  # type: ignore[no-untyped-def]
    # An organizer's decision changes the results too.
    annotator_decision_record(
        campaign=scheduling.campaign,
        annotator=scheduling.annotator,
        included=False,
        reason="test",
        decided_by=owner,
    )
    scheduling.recomputed(requests=1)


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
