"""Building tasks in the background: "Build tasks" queues a build and answers at once, the
setup page and its JSON show the build queued, running with progress, done or failed, a second
click joins the build under way, a failed build writes nothing, and a build that stopped moving
is replaced by the next click.

The queued builds run here through the Celery task applied in this process (the views are what
these tests are about); tests/annotation/tasking/test_task_build_worker.py runs them in a real
worker."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.core.cache import cache
from django.db import transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Item, ItemOutput, ProtocolConfig, Task, TaskBuild
from annotation.tasking import source as task_source
from annotation.tasking.background import progress_key, task_build_request, task_build_run
from annotation.tasking.build import config_lock_for_build, tasks_build, tasks_build_locked
from annotation.tasking.services import task_assign_next
from evalsite.jobs import heartbeat_limit
from tests.factories import (
    PASSWORD,
    builds_run_queued,
    make_campaign,
    make_config,
    make_rich_campaign,
    make_wide_campaign,
    tasks_as_rows,
)
from tests.support.threads import started

pytestmark = pytest.mark.django_db


def organizer_client(user: Any, language: str = "en") -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    assert client.login(username=user.username, password=PASSWORD)
    return client


def build_url(config: ProtocolConfig) -> str:
    return reverse("config_build", args=[config.campaign_id, config.pk])


def setup_page(client: Client, config: ProtocolConfig) -> str:
    response = client.get(reverse("annotation_setup", args=[config.campaign_id]))
    assert response.status_code == 200
    return response.content.decode()


def status_json(client: Client, config: ProtocolConfig) -> dict[str, Any]:
    response = client.get(reverse("config_builds_status", args=[config.campaign_id]))
    assert response.status_code == 200
    return {b["config"]: b for b in response.json()["builds"]}[config.pk]


def test_build_tasks_queues_a_build_and_answers_before_any_task_is_written(owner) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    config = make_config(campaign, "direct_assessment", build=False, outputs_per_screen=1)
    client = organizer_client(owner)
    response = client.post(build_url(config), follow=True)
    assert response.redirect_chain[0][0].endswith(f"#config-{config.pk}")
    assert "Build queued" in response.content.decode()
    build = TaskBuild.objects.get(config=config)
    assert (build.status, build.requested_by) == (TaskBuild.Status.QUEUED, owner)
    assert not Task.objects.filter(config=config).exists()
    page = setup_page(client, config)
    assert 'data-build-status="queued"' in page
    assert "Waiting for a worker." in page
    # Without JS: a link that loads the page again (one to a fragment of it would only scroll).
    setup_path = reverse("annotation_setup", args=[campaign.pk])
    assert f'<a href="{setup_path}" data-build-refresh>Refresh</a>' in page
    assert status_json(client, config)["status"] == "queued"

    [built] = builds_run_queued()
    assert built.status == TaskBuild.Status.DONE
    n_tasks = Task.objects.filter(config=config).count()
    n_items = Item.objects.filter(task__config=config).count()
    assert (built.tasks, built.items) == (n_tasks, n_items)
    assert n_tasks > 1
    message = f"Built {n_tasks} tasks with {n_items} items."
    page = setup_page(client, config)
    assert message in page
    assert "data-build-refresh" not in page
    state = status_json(client, config)
    assert (state["status"], state["active"], state["message"]) == ("done", False, message)


def test_a_background_build_writes_exactly_the_tasks_of_a_direct_build(owner) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    config = make_config(campaign, "adequacy_fluency", build=False, seed=7)
    task_build_request(config=config, user=owner)
    builds_run_queued()
    background = tasks_as_rows(config)
    assert background
    tasks_build(config=config)  # a rebuild, from the same seed
    assert tasks_as_rows(config) == background


def test_a_second_click_while_a_build_is_under_way_starts_none(owner, co_organizer) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner, organizers=[co_organizer])
    config = make_config(campaign, "direct_assessment", build=False, outputs_per_screen=1)
    organizer_client(owner).post(build_url(config))
    second = organizer_client(co_organizer).post(build_url(config), follow=True)
    assert "A build of these tasks is already queued; no second one was started." in (
        second.content.decode()
    )
    TaskBuild.objects.update(status=TaskBuild.Status.RUNNING)
    third = organizer_client(owner).post(build_url(config), follow=True)
    assert "already running; no second one was started." in third.content.decode()
    assert TaskBuild.objects.filter(config=config).count() == 1
    # Once it has ended, a click starts a new build (a rebuild).
    TaskBuild.objects.update(status=TaskBuild.Status.QUEUED)
    builds_run_queued()
    organizer_client(owner).post(build_url(config))
    assert TaskBuild.objects.filter(config=config, status=TaskBuild.Status.QUEUED).count() == 1


def test_the_database_allows_one_build_under_way_per_config(owner) -> None:  # type: ignore[no-untyped-def]
    from django.db import IntegrityError

    campaign = make_rich_campaign(owner=owner)
    config = make_config(campaign, "direct_assessment", build=False, outputs_per_screen=1)
    TaskBuild.objects.create(config=config, status=TaskBuild.Status.RUNNING)
    with pytest.raises(IntegrityError), transaction.atomic():
        TaskBuild.objects.create(config=config)
    TaskBuild.objects.create(config=config, status=TaskBuild.Status.FAILED)


def test_the_setup_page_shows_a_running_builds_progress(owner) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    config = make_config(campaign, "direct_assessment", build=False, outputs_per_screen=1)
    client = organizer_client(owner)
    client.post(build_url(config))
    build = TaskBuild.objects.get(config=config)
    TaskBuild.objects.filter(pk=build.pk).update(status=TaskBuild.Status.RUNNING)
    cache.set(progress_key(build.pk), {"stage": "planning", "done": 0, "total": 0})
    assert "Planning screens, tasks and QC items…" in setup_page(client, config)
    cache.set(progress_key(build.pk), {"stage": "writing", "done": 1000, "total": 4000})
    page = setup_page(client, config)
    assert "Writing items: 1,000 of 4,000 rows (25%)." in page
    assert '<progress max="100" value="25"' in page
    state = status_json(client, config)
    assert (state["status"], state["active"], state["percent"]) == ("running", True, 25)
    assert (state["done"], state["total"]) == (1000, 4000)


def test_the_worker_reports_every_row_it_writes(owner) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    config = make_config(campaign, "adequacy_fluency", build=False, outputs_per_screen=3)
    reports: list[tuple[str, int, int]] = []
    with transaction.atomic():
        locked = config_lock_for_build(config.pk)
        tasks_build_locked(locked, lambda *report: reports.append(report))
    rows = (
        Item.objects.filter(task__config=config).count()
        + ItemOutput.objects.filter(item__task__config=config).count()
    )
    stages = [stage for stage, _, _ in reports]
    assert stages[:3] == ["removing", "reading", "planning"]
    assert set(stages[3:]) == {"writing"}
    assert reports[-1] == ("writing", rows, rows)
    done = [done for stage, done, _ in reports if stage == "writing"]
    assert done == sorted(done)
    assert done[0] == 0


@pytest.mark.parametrize(
    ("language", "message"),
    [
        ("en", "Upload the source text and at least one system before building tasks."),
        ("de", "Laden Sie den Ausgangstext und mindestens ein System hoch"),
    ],
)
def test_a_refused_build_fails_with_its_message_in_the_requesters_language(  # type: ignore[no-untyped-def]
    owner, language, message
) -> None:
    campaign = make_campaign(owner=owner)  # no data
    config = make_config(campaign, "direct_assessment", build=False)
    client = organizer_client(owner, language)
    client.post(build_url(config))
    [build] = builds_run_queued()
    assert build.status == TaskBuild.Status.FAILED
    assert message in build.error
    assert message in setup_page(client, config)
    assert message in status_json(client, config)["message"]


def test_a_build_that_fails_half_way_leaves_the_earlier_tasks_as_they_were(  # type: ignore[no-untyped-def]
    owner, monkeypatch
) -> None:
    campaign = make_rich_campaign(owner=owner)
    config = make_config(campaign, "direct_assessment", outputs_per_screen=1)
    before = tasks_as_rows(config)
    config.seed += 1
    config.save()

    def broken(*args: Any, **kwargs: Any) -> Any:
        # Called once the old tasks are gone and the new real items and outputs written.
        assert ItemOutput.objects.filter(item__task__config=config).count() > 0
        assert len(tasks_as_rows(config)) < len(before)
        raise ValueError("disk full")

    monkeypatch.setattr(task_source, "make_bad_reference", broken)
    client = organizer_client(owner)
    client.post(build_url(config))
    [build] = builds_run_queued()
    assert build.status == TaskBuild.Status.FAILED
    assert build.error == "The build failed: ValueError: disk full"
    assert "The build failed: ValueError: disk full" in setup_page(client, config)
    assert tasks_as_rows(config) == before
    assert not cache.get(progress_key(build.pk))


def test_rebuilding_after_annotators_started_is_refused_at_once(owner, annotator) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    campaign.annotators.add(annotator)
    config = make_config(campaign, "direct_assessment", outputs_per_screen=1)
    assert task_assign_next(config=config, annotator=annotator) is not None
    page = organizer_client(owner).post(build_url(config), follow=True).content.decode()
    assert "Annotators have started on these tasks; they cannot be rebuilt." in page
    assert not TaskBuild.objects.exists()


def test_a_worker_refuses_a_rebuild_if_annotators_started_after_the_click(owner, annotator) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    campaign.annotators.add(annotator)
    config = make_config(campaign, "direct_assessment", outputs_per_screen=1)
    before = tasks_as_rows(config)
    organizer_client(owner).post(build_url(config))
    assert task_assign_next(config=config, annotator=annotator) is not None
    [build] = builds_run_queued()
    assert build.status == TaskBuild.Status.FAILED
    assert build.error == "Annotators have started on these tasks; they cannot be rebuilt."
    assert tasks_as_rows(config) == before


def test_a_build_that_stopped_moving_is_replaced_by_the_next_click(owner, settings) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    config = make_config(campaign, "direct_assessment", build=False, outputs_per_screen=1)
    client = organizer_client(owner)
    client.post(build_url(config))
    dead = TaskBuild.objects.get(config=config)
    long_ago = timezone.now() - timedelta(seconds=settings.EVALSITE_JOB_STALE_SECONDS + 60)
    TaskBuild.objects.filter(pk=dead.pk).update(
        status=TaskBuild.Status.RUNNING, progressed=long_ago
    )
    response = client.post(build_url(config), follow=True)
    assert "Build queued" in response.content.decode()
    dead.refresh_from_db()
    assert dead.status == TaskBuild.Status.FAILED
    # Running, its heartbeat stopped: failed saying the worker stopped (before any stage here).
    assert dead.error == (
        "The worker building the tasks stopped before its first stage; the tasks are as they "
        "were. Build again."
    )
    # Its message, should it come back, does nothing; the new build runs.
    assert task_build_run(build_id=dead.pk) is None
    [new] = builds_run_queued()
    assert new.status == TaskBuild.Status.DONE
    assert TaskBuild.objects.get(pk=dead.pk).status == TaskBuild.Status.FAILED


def test_a_build_delivered_again_after_it_finished_does_nothing(owner) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    config = make_config(campaign, "direct_assessment", build=False, outputs_per_screen=1)
    task_build_request(config=config, user=owner)
    [build] = builds_run_queued()
    tasks = list(Task.objects.filter(config=config).values_list("pk", flat=True))
    assert task_build_run(build_id=build.pk) is None
    assert list(Task.objects.filter(config=config).values_list("pk", flat=True)) == tasks


def test_a_build_that_cannot_be_sent_fails_saying_so(owner, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from kombu.exceptions import OperationalError

    from annotation.tasks import task_build

    campaign = make_rich_campaign(owner=owner)
    config = make_config(campaign, "direct_assessment", build=False, outputs_per_screen=1)

    def unreachable(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("Error 111 connecting to redis:6379. Connection refused.")

    with monkeypatch.context() as patched:
        patched.setattr(task_build, "apply_async", unreachable)
        response = organizer_client(owner).post(build_url(config), follow=True)
    assert "The task queue cannot be reached right now" in response.content.decode()
    build = TaskBuild.objects.get(config=config)
    assert build.status == TaskBuild.Status.FAILED
    # Not under way: the next click starts a build.
    organizer_client(owner).post(build_url(config))
    assert TaskBuild.objects.filter(config=config, status=TaskBuild.Status.QUEUED).exists()


@pytest.mark.django_db(transaction=True)
def test_a_build_taken_for_dead_leaves_the_tasks_as_they_were_when_it_ends_after_all(  # type: ignore[no-untyped-def]
    owner,
) -> None:
    """A worker that lived on after the setup page failed its build (its heartbeat had stopped:
    set back here) rolls the build back, so "the tasks are as they were" stays true."""
    campaign = make_wide_campaign(owner=owner, segments=600, systems=10)
    config = make_config(campaign, "direct_assessment", build=False, outputs_per_screen=1)
    build = task_build_request(config=config).build
    worker, ended = started(lambda: task_build_run(build_id=build.pk))
    deadline = time.monotonic() + 60
    while (cache.get(progress_key(build.pk)) or {}).get("stage") != "writing":
        assert worker.is_alive(), ended
        assert time.monotonic() < deadline, "the build did not reach its writing stage in 60 s"
        time.sleep(0.02)
    long_ago = timezone.now() - 2 * heartbeat_limit()
    TaskBuild.objects.filter(pk=build.pk).update(progressed=long_ago)
    setup_page(organizer_client(owner), config)  # the page looks: the build is failed
    assert TaskBuild.objects.get(pk=build.pk).status == TaskBuild.Status.FAILED
    worker.join(timeout=120)
    assert not worker.is_alive()
    [result] = ended
    assert result is not None
    assert result.status == TaskBuild.Status.FAILED
    assert result.error.startswith("The worker building the tasks stopped during “Writing items”")
    assert not Task.objects.filter(config=config).exists()
