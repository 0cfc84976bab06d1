"""The load benchmark's database and campaign (``benchmarks/load.py``): Django set up on the
benchmark's database, and the campaign its annotators work on."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from typing import Any

N_SYSTEMS = 4


def setup_django(database_url: str, redis_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ["CELERY_BROKER_URL"] = redis_url
    os.environ["CACHE_URL"] = redis_url
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
    import django

    django.setup()


@dataclass(frozen=True)
class Seeded:
    """What the client needs: the protocol config, one API token per annotator, and (for
    ``--flow submit``) the items of every task by position, each ``(item id, output ids)``."""

    config_id: int
    campaign_id: Any
    tokens: list[tuple[int, str]]  # (user id, token key)
    criteria: list[tuple[str, int, int]]  # (key, minimum, maximum) per output
    tasks: dict[int, list[tuple[int, list[int]]]]
    items: int
    # Whether answers mark error spans (ESA, MQM) beside the criteria.
    spans: bool = False
    # The categories a span takes (MQM's; none for ESA).
    categories: tuple[str, ...] = ()
    # The values a judgment stores per output: the criteria asked, and those worked out from
    # the spans (MQM's score).
    values_per_output: int = 1


def seed(
    *,
    annotators: int,
    items_per_annotator: int,
    task_size: int,
    protocol: str = "direct_assessment",
    rng_seed: int = 2024,
) -> Seeded:
    """A campaign with enough tasks for every annotator to submit ``items_per_annotator`` fresh
    answers, in the database Django is configured with (which must be migrated)."""
    from annotation.models import ProtocolConfig
    from annotation.protocols import PROTOCOLS
    from annotation.tasking.build import tasks_build

    definition = PROTOCOLS[protocol]
    per_screen = 1 if definition.single_output else N_SYSTEMS
    # Screens cover each (segment, system) once; QC items come on top, a margin.
    segments = max(20, -(-annotators * items_per_annotator * per_screen // N_SYSTEMS) + task_size)
    campaign = campaign_seed(corpus_files(segments=segments, rng_seed=rng_seed))
    tokens = annotators_seed(campaign, annotators)
    config = ProtocolConfig.objects.create(
        campaign=campaign,
        name=protocol,
        protocol=protocol,
        mode=definition.modes[0].key,
        items_per_task=task_size,
        outputs_per_screen=per_screen,
        annotations_per_task=1,
    )
    tasks_build(config=config)
    tasks = task_items(config)
    total = sum(len(t) for t in tasks.values())
    # Each annotator takes whole tasks until it has answered its share.
    needed = annotators * -(-items_per_annotator // task_size) * task_size
    if total < needed:
        raise SystemExit(f"the seeded campaign has {total} items, {needed} are needed")
    criteria = [
        (c.key, int(c.minimum), int(c.maximum)) for c in definition.criteria_for(per_screen)
    ]
    return Seeded(
        config_id=config.pk,
        campaign_id=campaign.pk,
        tokens=[(t.user_id, t.key) for t in tokens],
        criteria=criteria,
        tasks=tasks,
        items=total,
        spans=definition.marks_spans,
        categories=tuple(c.key for c in getattr(definition, "categories", ())),
        values_per_output=len(definition.criteria_for(per_screen))
        if not definition.marks_spans
        else len(definition.criteria),
    )


def corpus_files(*, segments: int, rng_seed: int) -> list[Any]:
    """The upload of a synthetic corpus (``benchmarks/mt_data.py``): source, reference,
    document ids and ``N_SYSTEMS`` systems of ``segments`` lines."""
    from annotation.campaigns.uploads import UploadFile
    from benchmarks.mt_data import make_corpus

    systems, refs = make_corpus(n_systems=N_SYSTEMS, n_segments=segments, seed=rng_seed)

    def text(lines: list[str]) -> bytes:
        return ("\n".join(lines) + "\n").encode("utf-8")

    return [
        UploadFile("load.src", text(refs[0]), "source"),
        UploadFile("load.ref", text(refs[0]), "references"),
        UploadFile("load.docids", text([f"doc{n // 10}" for n in range(segments)]), "doc_ids"),
    ] + [UploadFile(f"{name}.txt", text(lines), "systems") for name, lines in systems]


def campaign_seed(files: list[Any]) -> Any:
    """An organizer's active campaign holding ``files``."""
    from django.contrib.auth import get_user_model

    from annotation.campaigns.services import (
        campaign_create,
        campaign_data_import,
        user_make_organizer,
    )

    users = get_user_model()
    owner = users.objects.create_user(username="load-owner", password=secrets.token_urlsafe(16))
    user_make_organizer(user=owner)
    campaign = campaign_create(
        owner=owner,
        organizers=[],
        name="Load benchmark",
        source_language="de",
        target_language="en",
        status="active",
    )
    campaign_data_import(campaign=campaign, files=files, user=owner)
    return campaign


def annotators_seed(campaign: Any, annotators: int) -> list[Any]:
    """``annotators`` annotators of the campaign; their API tokens."""
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    users = get_user_model()
    people = users.objects.bulk_create(
        [users(username=f"load{a:03d}", password="!") for a in range(annotators)]
    )
    campaign.annotators.add(*people)
    tokens: list[Any] = Token.objects.bulk_create(
        [Token(user=u, key=Token.generate_key()) for u in people]
    )
    return tokens


def task_items(config: Any) -> dict[int, list[tuple[int, list[int]]]]:
    """The items of every task of ``config`` by task position, each ``(item id, output
    ids)``."""
    from annotation.models import Item, ItemOutput, Task

    by_position = dict(Task.objects.filter(config=config).values_list("pk", "position"))
    outputs: dict[int, list[int]] = {}
    for item_id, output_id in (
        ItemOutput.objects.filter(item__task__config=config)
        .order_by("item_id", "position")
        .values_list("item_id", "pk")
    ):
        outputs.setdefault(item_id, []).append(output_id)
    tasks: dict[int, list[tuple[int, list[int]]]] = {}
    for item_id, task_id in (
        Item.objects.filter(task__config=config)
        .order_by("task_id", "position")
        .values_list("pk", "task_id")
    ):
        tasks.setdefault(by_position[task_id], []).append((item_id, outputs[item_id]))
    return tasks
