"""Task builds on a real Celery worker process, PostgreSQL and Redis: "Build tasks" on the setup
page is built by the worker, with the tasks a direct build writes; a worker killed in the middle
of a build leaves no task behind, the build's heartbeat stops, the setup page then shows it
failed, naming the stage, within seconds, and the next click replaces it and another worker
builds the tasks."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from annotation.models import Item, ItemOutput, Task, TaskBuild
from annotation.tasking.background import progress_key
from annotation.tasking.build import tasks_build
from evalsite.jobs import HEARTBEATS_MISSED
from tests.factories import (
    PASSWORD,
    make_config,
    make_rich_campaign,
    make_wide_campaign,
    record_once_ended,
    tasks_as_rows,
)

pytestmark = pytest.mark.django_db(transaction=True)

BEAT = 1  # EVALSITE_JOB_HEARTBEAT_SECONDS of the worker and of this process


def wait_for(build_id: Any, timeout: float = 120) -> TaskBuild:
    build: TaskBuild = record_once_ended(
        TaskBuild, build_id, ended=lambda build: not build.active, timeout=timeout
    )
    return build


def test_a_worker_builds_the_tasks_asked_on_the_setup_page(celery_worker_process, owner) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    config = make_config(campaign, "ranking", build=False, outputs_per_screen=3, seed=11)
    celery_worker_process()
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    response = client.post(reverse("config_build", args=[campaign.pk, config.pk]))
    assert response.status_code == 302
    build = wait_for(TaskBuild.objects.get(config=config).pk)
    assert build.status == TaskBuild.Status.DONE, build.error
    n_tasks = Task.objects.filter(config=config).count()
    n_items = Item.objects.filter(task__config=config).count()
    assert (build.tasks, build.items) == (n_tasks, n_items)
    page = client.get(reverse("annotation_setup", args=[campaign.pk])).content.decode()
    assert f"Built {n_tasks} tasks with {n_items} items." in page
    built = tasks_as_rows(config)
    tasks_build(config=config)
    assert tasks_as_rows(config) == built


def test_a_worker_killed_in_the_middle_of_a_build_leaves_no_task_and_a_new_click_replaces_it(  # type: ignore[no-untyped-def]
    celery_worker_process, owner, settings
) -> None:
    settings.EVALSITE_JOB_HEARTBEAT_SECONDS = BEAT
    # 600 segments × 10 systems, one output a screen: 7,500 items and as many outputs to write.
    campaign = make_wide_campaign(owner=owner, segments=600, systems=10)
    config = make_config(campaign, "direct_assessment", build=False, outputs_per_screen=1)
    doomed = celery_worker_process(name="doomed", env={"EVALSITE_JOB_HEARTBEAT_SECONDS": str(BEAT)})
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    build_url = reverse("config_build", args=[campaign.pk, config.pk])
    client.post(build_url)
    build = TaskBuild.objects.get(config=config)
    deadline = time.monotonic() + 60
    while True:
        progress = cache.get(progress_key(build.pk)) or {}
        if progress.get("stage") == "writing" and progress["done"] > 0:
            break
        assert time.monotonic() < deadline, TaskBuild.objects.get(pk=build.pk).__dict__
        time.sleep(0.02)
    assert progress["done"] < progress["total"]
    os.killpg(doomed.pid, signal.SIGKILL)
    doomed.wait(timeout=30)
    killed = time.monotonic()

    # The build's transaction died with the worker: nothing of it is left.
    assert not Task.objects.filter(config=config).exists()
    assert not ItemOutput.objects.filter(item__task__config=config).exists()
    # Its heartbeat stopped: the setup page, looking, fails it within a few beats.
    setup = reverse("annotation_setup", args=[campaign.pk])
    while (dead := TaskBuild.objects.get(pk=build.pk)).status != TaskBuild.Status.FAILED:
        assert time.monotonic() - killed < 60, dead.__dict__
        client.get(setup)
        time.sleep(0.5)
    assert time.monotonic() - killed < 2 * HEARTBEATS_MISSED * BEAT + 5
    message = (
        "The worker building the tasks stopped during “Writing items”; the tasks are as they "
        "were. Build again."
    )
    assert dead.error == message
    assert message in client.get(setup).content.decode()

    # The next click starts a new build, which another worker builds.
    client.post(build_url)
    new = TaskBuild.objects.get(config=config, status=TaskBuild.Status.QUEUED)
    celery_worker_process(name="second")
    new = wait_for(new.pk)
    assert new.status == TaskBuild.Status.DONE, new.error
    assert new.items == Item.objects.filter(task__config=config).count() == 7500
    assert TaskBuild.objects.get(pk=build.pk).status == TaskBuild.Status.FAILED
