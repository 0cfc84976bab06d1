"""Document screens in task building: windows of a document in document order, every window
in every system's translation, one item per segment grouped by its screen, and QC copies of
whole windows (a repeat, a degraded copy) placed as screens are."""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Item, ItemKind, ItemOutput, ProtocolConfig
from annotation.tasking.build import tasks_build
from annotation.tasking.plan import (
    REAL,
    PlannedItem,
    PlannedTask,
    QcMix,
    Window,
    document_screens,
    document_windows,
    expand_windows,
    plan_tasks,
    spread_documents,
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


def _documents_in_a_row(tasks: list[PlannedTask[Window]], document_of: list[int]) -> int:
    """How often a screen follows one of the same document, within and across tasks."""
    shown = [document_of[p.screen.segments[0]] for t in tasks for p in t.items]
    return sum(a == b for a, b in itertools.pairwise(shown))


def test_no_document_is_shown_twice_in_a_row_and_qc_copies_keep_their_originals() -> None:
    # 6 documents of 4 segments in 3 systems' translations; windows of 2: every document has
    # 6 screens, so a shuffled plan shows some document twice in a row.
    places = [(d, p) for d in range(6) for p in range(4)]
    document_of = [d for d, _p in places]
    windows = document_screens(document_windows(places, 2), 3)
    before, checked = 0, 0
    for seed in range(20):
        plans = plan_tasks(
            windows, items_per_task=16, mix=QcMix(20, 10, 0), rng=np.random.default_rng(seed)
        )
        spread = spread_documents(plans, document_of)
        for plan, task in zip(plans, spread, strict=True):
            # The same screens, each QC copy still pointing at a real screen of its window.
            assert Counter(map(id, (p.screen for p in plan.items))) == Counter(
                map(id, (p.screen for p in task.items))
            )
            for planned in task.items:
                if planned.kind != REAL:
                    assert planned.original is not None
                    original = task.items[planned.original]
                    assert original.kind == REAL
                    assert original.screen.segments == planned.screen.segments
        # A short last task may hold one document only: no order helps there. Elsewhere none
        # follows itself, within a task or from one task to the next.
        counts = [Counter(document_of[p.screen.segments[0]] for p in t.items) for t in plans]
        if all(max(c.values()) <= sum(c.values()) // 2 for c in counts):
            checked += 1
            before += _documents_in_a_row(plans, document_of)
            assert _documents_in_a_row(spread, document_of) == 0
    assert checked >= 15
    # The shuffled plans did show a document twice in a row (the test tests something).
    assert before > 0


def test_screens_stay_in_place_unless_they_follow_their_own_document() -> None:
    screens = [Window((s,), 0) for s in range(5)]
    task = PlannedTask([PlannedItem(REAL, w) for w in screens])
    # Documents A B C D E: nothing to change.
    assert [p.screen for p in spread_documents([task], [0, 1, 2, 3, 4])[0].items] == screens
    # A A B C B: the B after the first A moves up; the rest keeps its order.
    (moved,) = spread_documents([task], [0, 0, 1, 2, 1])
    assert [p.screen.segments[0] for p in moved.items] == [0, 2, 1, 3, 4]
    # The next task does not start with the document the task before it ended with.
    documents = [0, 1, 2, 3, 1]
    second = PlannedTask([PlannedItem(REAL, Window((s,), 1)) for s in (4, 0, 2, 3, 1)])
    first, after = spread_documents([task, second], documents)
    assert [p.screen.segments[0] for p in first.items] == [0, 1, 2, 3, 4]
    assert [p.screen.segments[0] for p in after.items] == [0, 4, 2, 3, 1]


def test_a_document_filling_most_of_a_task_repeats_as_little_as_it_must() -> None:
    task = PlannedTask([PlannedItem(REAL, Window((s,), 0)) for s in range(5)])
    # A A A A B: at least two repeats (A B A A A); no more.
    (spread,) = spread_documents([task], [0, 0, 0, 0, 1])
    assert _documents_in_a_row([spread], [0, 0, 0, 0, 1]) == 2


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
def test_an_annotator_never_gets_one_document_twice_in_a_row(rich) -> None:  # type: ignore[no-untyped-def]
    config = make_config(
        rich,
        "esa",
        screen=DOCUMENT,
        document_window=0,
        items_per_task=40,
        qc_bad_reference=20,
        qc_repeat=20,
        qc_reference=0,
    )
    screens = _screens(config)
    shown = [items[0].segment.document_id for items in screens.values()]
    assert len(shown) > 20
    # Within each task and from one task to the next, in the order an annotator meets them.
    assert all(a != b for a, b in itertools.pairwise(shown))


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
