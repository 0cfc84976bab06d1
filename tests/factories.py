"""Factories for domain objects used across the tests."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from annotation.campaigns.services import campaign_create, campaign_data_import, user_make_organizer
from annotation.campaigns.uploads import UploadFile
from annotation.models import Campaign

PASSWORD = "correct-horse-battery-staple"

SOURCE = [
    "Das Haus ist klein.",
    "Der Hund bellt laut.",
    "Wir fahren morgen nach Berlin.",
    "Die Sitzung beginnt um neun Uhr.",
]
REF_A = [
    "The house is small.",
    "The dog barks loudly.",
    "We are going to Berlin tomorrow.",
    "The meeting starts at nine o'clock.",
]
REF_B = [
    "The house is little.",
    "The dog is barking loudly.",
    "Tomorrow we travel to Berlin.",
    "The session begins at nine.",
]
DOC_IDS = ["d1", "d1", "d2", "d2"]
SYSTEMS = {
    ("good", "opt0"): [
        "The house is small.",
        "The dog barks loud.",
        "We go to Berlin tomorrow.",
        "The meeting starts at nine.",
    ],
    ("good", "opt1"): [
        "The house is small.",
        "The dog barks.",
        "We drive to Berlin tomorrow.",
        "The meeting begins at nine.",
    ],
    ("bad", "opt0"): ["House small.", "Dog the barks.", "Berlin tomorrow we.", "Meeting nine."],
    ("bad", "opt1"): ["The house.", "Dog barks laut.", "We Berlin.", "The Sitzung nine."],
}


def make_user(username: str, *, organizer: bool = False, **extra: Any) -> AbstractBaseUser:
    user = get_user_model().objects.create_user(username=username, password=PASSWORD, **extra)
    if organizer:
        user_make_organizer(user=user)
    return user


def lines(items: list[str]) -> bytes:
    return ("\n".join(items) + "\n").encode("utf-8")


def plain_files() -> list[UploadFile]:
    files = [
        UploadFile("src.de", lines(SOURCE), "source"),
        UploadFile("ref.A.en", lines(REF_A), "references"),
        UploadFile("ref.B.en", lines(REF_B), "references"),
        UploadFile("docs.txt", lines(DOC_IDS), "doc_ids"),
    ]
    files += [
        UploadFile(f"{system}.{run}.txt", lines(text), "systems")
        for (system, run), text in SYSTEMS.items()
    ]
    return files


def make_campaign(
    *,
    owner: AbstractBaseUser,
    organizers: list[AbstractBaseUser] | None = None,
    with_data: bool = False,
    **fields: Any,
) -> Campaign:
    defaults: dict[str, Any] = {
        "name": "News de-en",
        "source_language": "de",
        "target_language": "en",
        "status": Campaign.Status.ACTIVE,
    }
    defaults.update(fields)
    campaign = campaign_create(owner=owner, organizers=organizers or [], **defaults)
    if with_data:
        campaign_data_import(campaign=campaign, files=plain_files(), user=owner)
    return campaign


def make_rich_campaign(*, owner: AbstractBaseUser, **fields: Any) -> Campaign:
    """A campaign with the demo's data: 60 segments in 6 documents, 2 references, 4 systems × 3
    runs — enough for tasks of every protocol."""
    from annotation.demo.campaign import demo_files

    campaign = make_campaign(owner=owner, **fields)
    campaign_data_import(campaign=campaign, files=demo_files(), user=owner)
    return campaign


def make_config(
    campaign: Campaign,
    protocol: str = "adequacy_fluency",
    *,
    build: bool = True,
    **fields: Any,
) -> Any:
    """A protocol config of ``campaign`` (with its tasks built unless ``build`` is false)."""
    from annotation.models import ProtocolConfig
    from annotation.protocols import PROTOCOLS
    from annotation.tasking.build import tasks_build

    defaults: dict[str, Any] = {
        "name": protocol,
        "protocol": protocol,
        "mode": PROTOCOLS[protocol].modes[0].key,
        "items_per_task": 10,
        "outputs_per_screen": 4,
        # The suite's fixtures give some systems identical outputs: the tests of screens, QC,
        # analysis and pages count one shown output per system, as with merging switched off;
        # merging itself is tested with it on (tests/annotation/tasking/test_merging.py, …).
        "merge_identical": False,
    }
    defaults.update(fields)
    config = ProtocolConfig.objects.create(campaign=campaign, **defaults)
    if build:
        tasks_build(config=config)
    return config


def full_answer(item: Any, value: float | None = None) -> dict[str, dict[str, Any]]:
    """A valid answer to every output and criterion of an item."""
    protocol = item.task.config.definition
    outputs = list(item.outputs.order_by("position"))
    criteria = protocol.criteria_for(len(outputs))
    answer: dict[str, dict[str, Any]] = {
        str(o.pk): {
            c.key: value if value is not None else (c.minimum + c.maximum) // 2 for c in criteria
        }
        for o in outputs
    }
    if protocol.marks_spans:
        # No errors marked: a valid answer of an error-span kind.
        for scores in answer.values():
            scores["spans"] = []
    return answer


def imports_run_queued() -> list[Any]:
    """Run the queued judgment imports in this process, as a worker would: the Celery task
    itself, applied locally (for tests about views and services;
    tests/annotation/judgment_import/test_judgment_import_worker.py uses a worker)."""
    from django.conf import settings
    from django.utils import translation

    from annotation.models import JudgmentImportJob
    from annotation.tasks import judgment_import

    queued = list(
        JudgmentImportJob.objects.filter(status=JudgmentImportJob.Status.QUEUED)
        .order_by("created")
        .values_list("pk", flat=True)
    )
    with translation.override(settings.LANGUAGE_CODE):
        for pk in queued:
            judgment_import.apply(args=(str(pk),))
    return list(JudgmentImportJob.objects.filter(pk__in=queued).order_by("created"))


def builds_run_queued() -> list[Any]:
    """Run the queued task builds in this process, as a worker would: the Celery task itself,
    applied locally (for tests about views; tests/annotation/tasking/test_task_build_worker.py uses
    a worker)."""
    from django.conf import settings
    from django.utils import translation

    from annotation.models import TaskBuild
    from annotation.tasks import task_build

    queued = list(
        TaskBuild.objects.filter(status=TaskBuild.Status.QUEUED)
        .order_by("created")
        .values_list("pk", flat=True)
    )
    # In the default language, as a worker's: not the one of the test's last request.
    with translation.override(settings.LANGUAGE_CODE):
        for pk in queued:
            task_build.apply(args=(str(pk),))
    return list(TaskBuild.objects.filter(pk__in=queued).order_by("created"))


def make_wide_campaign(*, owner: AbstractBaseUser, segments: int, systems: int) -> Campaign:
    """Synthetic text of ``segments`` segments with a reference and ``systems`` systems of one
    run each: a campaign whose build takes a while."""
    words = [f"w{i}" for i in range(300)]

    def sentence(i: int, salt: int) -> str:
        return " ".join(words[(i * 7 + j * 13 + salt) % len(words)] for j in range(12 + i % 9))

    files = [
        UploadFile("src.de", lines([sentence(i, 0) for i in range(segments)]), "source"),
        UploadFile("ref.en", lines([sentence(i, 1) for i in range(segments)]), "references"),
    ]
    for n in range(systems):
        output = [sentence(i, n + 2) for i in range(segments)]
        files.append(UploadFile(f"s{n}.opt0.txt", lines(output), "systems"))
    campaign = make_campaign(owner=owner, name="wide")
    campaign_data_import(campaign=campaign, files=files, user=owner)
    return campaign


def tasks_as_rows(config: Any) -> list[tuple[Any, ...]]:
    """Every item and output of the config's tasks, by position: what a build wrote."""
    from annotation.models import ItemOutput

    return [
        (
            o.item.task.position,
            o.item.position,
            o.item.kind,
            o.item.segment_id,
            o.position,
            o.kind,
            o.translation_id,
            o.text,
        )
        for o in ItemOutput.objects.filter(item__task__config=config)
        .select_related("item__task")
        .order_by("item__task__position", "item__position", "position")
    ]


def record_once_ended(
    model: Any, pk: Any, *, ended: Callable[[Any], bool], timeout: float, interval: float = 0.2
) -> Any:
    """The record ``pk`` of ``model`` (an analysis job, a task build) read again until a worker
    has ended it; AssertionError with its fields after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        record = model.objects.get(pk=pk)
        if ended(record):
            return record
        if time.monotonic() >= deadline:
            raise AssertionError(
                f"{model.__name__} {pk} did not end in {timeout} s: {record.__dict__}"
            )
        time.sleep(interval)
