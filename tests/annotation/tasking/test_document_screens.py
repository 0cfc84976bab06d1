"""Document screens in task building: windows of a document in document order, every window
in every system's translation, one item per segment grouped by its screen, and QC copies of
whole windows (a repeat, a degraded copy) placed as screens are."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Item, ItemKind, ItemOutput, ProtocolConfig
from annotation.tasking.build import tasks_build
from annotation.tasking.plan import (
    REAL,
    QcMix,
    Window,
    document_screens,
    document_windows,
    expand_windows,
    plan_tasks,
    windows_per_task,
)
from annotation.tasking.source import TaskError
from tests.factories import PASSWORD, make_config, make_rich_campaign

DOCUMENT = ProtocolConfig.Screen.DOCUMENT


def test_a_window_of_zero_is_the_whole_document_in_document_order() -> None:
    # Segment i: (document, position in the document); listed out of order on purpose.
    places = [(7, 1), (7, 0), (3, 0), (7, 2), (3, 1)]
    assert document_windows(places, 0) == [(1, 0, 3), (2, 4)]


@pytest.mark.parametrize(
    ("length", "size", "lengths"),
    [(11, 10, [6, 5]), (10, 10, [10]), (10, 3, [3, 3, 2, 2]), (5, 1, [1] * 5), (4, 9, [4])],
)
def test_long_documents_are_cut_into_the_fewest_near_equal_windows(
    length: int, size: int, lengths: list[int]
) -> None:
    windows = document_windows([(0, p) for p in range(length)], size)
    assert [len(w) for w in windows] == lengths
    assert [s for w in windows for s in w] == list(range(length))


def test_every_window_is_shown_in_every_systems_translation() -> None:
    screens = document_screens([(0, 1), (2,)], 3)
    assert Counter(s.segments for s in screens) == {(0, 1): 3, (2,): 3}
    assert {s.system for s in screens if s.segments == (2,)} == {0, 1, 2}


def test_a_task_takes_as_many_windows_as_make_about_its_size_in_segments() -> None:
    screens = [Window(tuple(range(10)), 0), Window(tuple(range(5)), 0)]
    assert windows_per_task(screens, 100) == 13  # 100 / 7.5
    assert windows_per_task(screens, 3) == 1


def test_expanded_windows_keep_their_segments_together_and_copy_them_segment_by_segment() -> None:
    windows = document_screens(document_windows([(d, p) for d in range(6) for p in range(4)], 0), 2)
    plans = plan_tasks(
        windows, items_per_task=10, mix=QcMix(20, 10, 0), rng=np.random.default_rng(3)
    )
    expanded = expand_windows(plans)
    assert len(expanded) == len(plans)
    for plan, task in zip(plans, expanded, strict=True):
        assert len(task.items) == 4 * len(plan.items)
        for n, planned in enumerate(plan.items):
            items = task.items[4 * n : 4 * n + 4]
            assert {i.screen_start for i in items} == {4 * n}
            assert [i.screen.segment for i in items] == list(planned.screen.segments)
            assert {i.screen.systems for i in items} == {(planned.screen.system,)}
            assert {i.kind for i in items} == {planned.kind}
            if planned.kind != REAL:
                assert planned.original is not None
                originals = [task.items[i.original] for i in items if i.original is not None]
                assert [o.screen.segment for o in originals] == list(planned.screen.segments)
                assert {o.kind for o in originals} == {REAL}


@pytest.fixture
def rich(owner):  # type: ignore[no-untyped-def]
    return make_rich_campaign(owner=owner)


def _screens(config: ProtocolConfig) -> dict[tuple[int, int], list[Item]]:
    """The items of a config by (task, screen), in task order."""
    screens: dict[tuple[int, int], list[Item]] = defaultdict(list)
    for item in (
        Item.objects.filter(task__config=config)
        .select_related("segment")
        .prefetch_related("outputs")
        .order_by("task__position", "position")
    ):
        assert item.screen is not None
        screens[(item.task_id, item.screen)].append(item)
    return screens


@pytest.mark.django_db
def test_document_screens_show_one_systems_run_for_consecutive_segments_in_document_order(
    rich,  # type: ignore[no-untyped-def]
) -> None:
    config = make_config(
        rich, "direct_assessment", screen=DOCUMENT, document_window=4, items_per_task=30
    )
    screens = _screens(config)
    real = [items for items in screens.values() if items[0].kind == ItemKind.REAL]
    # The demo's 6 documents of 10 segments: windows of 4, 3 and 3, for each of 4 systems.
    assert Counter(len(items) for items in real) == {4: 24, 3: 48}
    for (_task, start), items in screens.items():
        assert [i.position for i in items] == list(range(start, start + len(items)))
        assert len({i.segment.document_id for i in items}) == 1
        places = [i.segment.position_in_document for i in items]
        assert places == list(range(places[0], places[0] + len(items)))
        outputs = [o for i in items for o in i.outputs.all()]
        assert len(outputs) == len(items)
        assert len({(o.system_id, o.run_id) for o in outputs if o.system_id}) <= 1
    # Every segment is shown once in every system's translation on a real screen.
    shown = ItemOutput.objects.filter(item__task__config=config, kind=ItemKind.REAL)
    assert Counter(shown.values_list("item__segment_id", "system_id")).most_common(1)[0][1] == 1
    assert shown.count() == 60 * 4


@pytest.mark.django_db
def test_qc_copies_a_whole_window_segment_by_segment(rich) -> None:  # type: ignore[no-untyped-def]
    config = make_config(
        rich,
        "esa",
        screen=DOCUMENT,
        document_window=0,
        items_per_task=50,
        qc_bad_reference=20,
        qc_repeat=20,
        qc_reference=0,
    )
    copies = [items for items in _screens(config).values() if items[0].kind != ItemKind.REAL]
    assert {items[0].kind for items in copies} == {ItemKind.BAD_REFERENCE, ItemKind.REPEAT}
    for items in copies:
        assert len({i.kind for i in items}) == 1
        originals = [i.original for i in items]
        assert originals[0] is not None
        # The original screen, item by item, in the same task.
        assert [o.position for o in originals] == [
            originals[0].position + n for n in range(len(items))
        ]
        assert {o.screen for o in originals} == {originals[0].position}
        assert all(
            o.task_id == i.task_id and o.segment_id == i.segment_id
            for o, i in zip(originals, items, strict=True)
        )
        if items[0].kind == ItemKind.BAD_REFERENCE:
            # Every segment of a bad-reference window is degraded, so each one is a QC pair.
            for item in items:
                (output,) = item.outputs.select_related("original")
                assert output.kind == ItemKind.BAD_REFERENCE
                assert output.text != output.original.text


@pytest.mark.django_db
def test_segment_screens_stay_screens_of_their_own(rich) -> None:  # type: ignore[no-untyped-def]
    config = make_config(rich, "direct_assessment", items_per_task=20)
    assert not Item.objects.filter(task__config=config, screen__isnull=False).exists()


@pytest.mark.django_db
def test_a_kind_without_document_screens_is_refused(rich) -> None:  # type: ignore[no-untyped-def]
    config = make_config(rich, "ranking", build=False, screen=DOCUMENT)
    with pytest.raises(TaskError, match="no document screens"):
        tasks_build(config=config)


@pytest.mark.django_db
def test_the_organizers_pages_name_document_screens(rich, owner) -> None:  # type: ignore[no-untyped-def]
    config = make_config(rich, "mqm", screen=DOCUMENT, document_window=5, items_per_task=20)
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    setup = client.get(reverse("annotation_setup", args=[rich.pk])).content.decode()
    assert "document screens of up to 5 segments" in setup
    # One system's translation per screen, whatever k the config holds.
    assert f'<tr id="config-{config.pk}">' in setup
    row = setup[setup.index(f'<tr id="config-{config.pk}">') :]
    assert '<td class="num">1</td>' in row[: row.index("</tr>")]
    tasks = client.get(reverse("config_tasks", args=[rich.pk, config.pk])).content.decode()
    assert "Document: consecutive segments on one screen" in tasks
