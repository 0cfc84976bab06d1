"""Campaigns with judgments in the database, built from a :class:`Judgments` table.

The lead's task-building service is not there yet, so the tests of the analysis create protocol
configs, tasks, items, shown outputs, assignments, judgments and values directly: one item per
screen of the table, one shown output per row, one judgment per (annotator, screen) and one
value per row. QC rows point to their originals exactly as the annotation pages will store them
(``Item.original`` and ``ItemOutput.original``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from annotation.models import (
    Assignment,
    Campaign,
    Document,
    Item,
    ItemKind,
    ItemOutput,
    Judgment,
    JudgmentValue,
    ProtocolConfig,
    Reference,
    Run,
    Segment,
    System,
    Task,
    Translation,
)
from evalcore.human import ItemType, Judgments
from tests.factories import make_campaign

KIND = {
    int(ItemType.REAL): ItemKind.REAL,
    int(ItemType.REPEAT): ItemKind.REPEAT,
    int(ItemType.REFERENCE): ItemKind.REFERENCE,
    int(ItemType.BAD_REF): ItemKind.BAD_REFERENCE,
}
START = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


@dataclass
class BuiltCampaign:
    """What :func:`build_judged_campaign` stored, with the row → database id maps."""

    campaign: Campaign
    config: ProtocolConfig
    users: list[AbstractBaseUser]  # by annotator code
    systems: list[System]  # by system code (references excluded)
    segments: list[Segment]  # by segment code
    value_ids: list[int]  # JudgmentValue id per row of the table


def make_text_campaign(
    *, owner: AbstractBaseUser, n_segments: int, system_names: list[str], name: str = "Synthetic"
) -> tuple[Campaign, list[Segment], list[System], dict[tuple[int, int], Translation]]:
    """A campaign with segments in documents of ten, one reference each, and systems with one
    run ("main") that translate every segment."""
    campaign = make_campaign(owner=owner, name=name)
    documents = Document.objects.bulk_create(
        [
            Document(campaign=campaign, external_id=f"doc{d + 1}", position=d)
            for d in range((n_segments + 9) // 10)
        ]
    )
    segments = Segment.objects.bulk_create(
        [
            Segment(
                campaign=campaign,
                document=documents[s // 10],
                position=s,
                position_in_document=s % 10,
                external_id=str(s % 10 + 1),
                source=f"Quelle {s + 1}.",
            )
            for s in range(n_segments)
        ]
    )
    Reference.objects.bulk_create(
        [
            Reference(segment=seg, index=0, label="ref", text=f"Reference {seg.position + 1}.")
            for seg in segments
        ]
    )
    systems = [System.objects.create(campaign=campaign, name=n) for n in system_names]
    runs = [Run.objects.create(system=s, name="main", position=0) for s in systems]
    translations = Translation.objects.bulk_create(
        [
            Translation(run=run, segment=seg, text=f"{system.name} says {seg.position + 1}.")
            for system, run in zip(systems, runs, strict=True)
            for seg in segments
        ]
    )
    by_key = {(t.run.system_id, t.segment_id): t for t in translations}
    return campaign, segments, systems, by_key


def build_judged_campaign(
    *,
    owner: AbstractBaseUser,
    judgments: Judgments,
    system_names: list[str],
    protocol: str = "direct_assessment",
    criterion: str = "score",
    task: npt.ArrayLike | None = None,
    usernames: list[str] | None = None,
    campaign_name: str = "Synthetic",
) -> BuiltCampaign:
    """Store ``judgments`` as a campaign: system codes below ``len(system_names)`` are systems,
    higher codes are references shown as outputs. ``task`` gives each row's task (default: one
    task per annotator); every screen of the table becomes one item of its task."""
    campaign, segments, systems, translations = make_text_campaign(
        owner=owner,
        n_segments=judgments.n_segments,
        system_names=system_names,
        name=campaign_name,
    )
    config = ProtocolConfig.objects.create(
        campaign=campaign,
        name="Main",
        protocol=protocol,
        mode="source" if protocol == "direct_assessment" else "bilingual",
        seed=2024,
    )
    users = _make_annotators(campaign, judgments, usernames)
    row_task = np.asarray(judgments.annotator if task is None else task, dtype=np.int64)
    tasks = {
        t: Task.objects.create(
            config=config,
            position=i,
            size=len(set(judgments.screen[row_task == t].tolist())),
            annotations_needed=1,
        )
        for i, t in enumerate(sorted(set(row_task.tolist())))
    }
    screens: dict[int, list[int]] = {}
    for row, screen in enumerate(judgments.screen.tolist()):
        screens.setdefault(screen, []).append(row)
    item_of_screen = _make_items(judgments, segments, screens, tasks, row_task)
    references = {r.segment_id: r for r in Reference.objects.filter(segment__in=segments, index=0)}
    output_of_row = _make_outputs(
        judgments, systems, segments, translations, references, screens, item_of_screen
    )
    values = _make_judgments(
        judgments, criterion, users, tasks, row_task, screens, item_of_screen, output_of_row
    )
    return BuiltCampaign(
        campaign=campaign,
        config=config,
        users=users,
        systems=systems,
        segments=segments,
        value_ids=[v.pk for v in values],
    )


def _make_annotators(
    campaign: Campaign, judgments: Judgments, usernames: list[str] | None
) -> list[AbstractBaseUser]:
    user_model = get_user_model()
    names = usernames or [f"judge{a:02d}" for a in range(judgments.n_annotators)]
    users = []
    for username in names:
        user = user_model(username=username)
        user.set_unusable_password()
        users.append(user)
    users = user_model.objects.bulk_create(users)
    campaign.annotators.add(*users)
    return users


def _make_items(
    judgments: Judgments,
    segments: list[Segment],
    screens: dict[int, list[int]],
    tasks: dict[int, Task],
    row_task: npt.NDArray[np.int64],
) -> dict[int, Item]:
    """The item of each screen (``screens``: its rows, in order of the screens' first rows)."""
    # One item per screen, in order of the screens' first rows; real items are stored first
    # because QC items point to them, then outputs without an original, then the copies.
    screen_of_row = judgments.screen.tolist()
    kind_of_screen = {
        screen: KIND[int(judgments.item_type[rows].max())] for screen, rows in screens.items()
    }
    task_of_screen = {screen: tasks[int(row_task[rows[0]])] for screen, rows in screens.items()}
    first_real: dict[int, int] = {}
    for screen, kind in kind_of_screen.items():
        if kind == ItemKind.REAL:
            first_real.setdefault(task_of_screen[screen].pk, screen)
    position: dict[int, int] = {}
    filled: dict[int, int] = {}
    for screen in screens:
        task_pk = task_of_screen[screen].pk
        position[screen] = filled.get(task_pk, 0)
        filled[task_pk] = position[screen] + 1
    item_of_screen: dict[int, Item] = {}
    for real in (True, False):
        created = []
        for screen, rows in screens.items():
            kind = kind_of_screen[screen]
            if (kind == ItemKind.REAL) != real:
                continue
            originals = [int(judgments.original[r]) for r in rows if judgments.original[r] >= 0]
            original_screen = (
                screen_of_row[originals[0]]
                if originals
                else first_real.get(task_of_screen[screen].pk)
            )
            item = Item(
                task=task_of_screen[screen],
                position=position[screen],
                kind=kind,
                segment=segments[int(judgments.segment[rows[0]])],
                original=None if real else item_of_screen[original_screen],
            )
            item_of_screen[screen] = item
            created.append(item)
        Item.objects.bulk_create(created)
    return item_of_screen


def _make_outputs(
    judgments: Judgments,
    systems: list[System],
    segments: list[Segment],
    translations: dict[tuple[int, int], Translation],
    references: dict[int, Reference],
    screens: dict[int, list[int]],
    item_of_screen: dict[int, Item],
) -> dict[int, ItemOutput]:
    """The shown output of each row: outputs without an original first, then the copies."""
    output_of_row: dict[int, ItemOutput] = {}
    for copies in (False, True):
        created = []
        for screen, rows in screens.items():
            for slot, row in enumerate(rows):
                if (judgments.original[row] >= 0) != copies:
                    continue
                output = _output(
                    item_of_screen[screen],
                    slot,
                    row,
                    judgments,
                    systems,
                    segments,
                    translations,
                    references,
                    output_of_row,
                )
                output_of_row[row] = output
                created.append(output)
        ItemOutput.objects.bulk_create(created)
    return output_of_row


def _make_judgments(
    judgments: Judgments,
    criterion: str,
    users: list[AbstractBaseUser],
    tasks: dict[int, Task],
    row_task: npt.NDArray[np.int64],
    screens: dict[int, list[int]],
    item_of_screen: dict[int, Item],
    output_of_row: dict[int, ItemOutput],
) -> list[JudgmentValue]:
    """Done assignments, one judgment per screen and one value per row (in row order)."""
    assignments = {
        (t.pk, int(a)): Assignment.objects.create(
            task=t,
            annotator=users[int(a)],
            status=Assignment.Status.DONE,
            origin=Assignment.Origin.PUSH,
            claimed_at=START,
            completed_at=START + timedelta(hours=2),
        )
        for t_code, t in tasks.items()
        for a in sorted(set(judgments.annotator[row_task == t_code].tolist()))
    }
    judgment_rows = []
    clock: dict[int, datetime] = {}
    for screen, rows in screens.items():
        first = rows[0]
        annotator = int(judgments.annotator[first])
        item = item_of_screen[screen]
        seconds = float(judgments.seconds[first])
        shown = clock.get(annotator, START)
        submitted = shown + timedelta(seconds=seconds if np.isfinite(seconds) else 10.0)
        clock[annotator] = submitted
        judgment_rows.append(
            Judgment(
                item=item,
                annotator=users[annotator],
                assignment=assignments[(item.task_id, annotator)],
                submission_id=uuid.uuid4(),
                answer={
                    str(output_of_row[r].pk): {criterion: float(judgments.score[r])} for r in rows
                },
                shown_at=shown,
                submitted_at=submitted,
                seconds=seconds if np.isfinite(seconds) else None,
            )
        )
    stored = Judgment.objects.bulk_create(judgment_rows)
    judgment_of_screen = dict(zip(screens, stored, strict=True))
    return JudgmentValue.objects.bulk_create(
        [
            JudgmentValue(
                judgment=judgment_of_screen[int(judgments.screen[row])],
                output=output_of_row[row],
                criterion=criterion,
                value=float(judgments.score[row]),
            )
            for row in range(len(judgments))
        ]
    )


def _output(
    item: Item,
    slot: int,
    row: int,
    judgments: Judgments,
    systems: list[System],
    segments: list[Segment],
    translations: dict[tuple[int, int], Translation],
    references: dict[int, Reference],
    output_of_row: dict[int, ItemOutput],
) -> ItemOutput:
    kind = KIND[int(judgments.item_type[row])]
    segment = segments[int(judgments.segment[row])]
    original = int(judgments.original[row])
    system_code = int(judgments.system[row])
    if kind == ItemKind.REFERENCE or system_code >= len(systems):
        reference = references[segment.pk]
        return ItemOutput(
            item=item,
            position=slot,
            kind=ItemKind.REFERENCE,
            reference=reference,
            text=reference.text,
        )
    system = systems[system_code]
    translation = translations[(system.pk, segment.pk)]
    degraded = kind == ItemKind.BAD_REFERENCE
    return ItemOutput(
        item=item,
        position=slot,
        kind=kind,
        translation=translation,
        system=system,
        run=translation.run,
        original=output_of_row[original] if original >= 0 else None,
        text=f"{translation.text} (degraded)" if degraded else translation.text,
    )
