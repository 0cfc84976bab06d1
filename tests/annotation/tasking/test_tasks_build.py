"""Building tasks in the database: balanced real items, QC copies that point to their originals,
degraded and reference outputs, determinism, and no rebuild once annotators started."""

from __future__ import annotations

from collections import Counter

import pytest
from django.utils import translation

from annotation.models import Item, ItemKind, ItemOutput, Reference, Segment, Task
from annotation.tasking import plan as taskplan
from annotation.tasking.build import tasks_build
from annotation.tasking.services import task_assign_next
from annotation.tasking.source import TaskError
from tests.factories import make_config, make_rich_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def rich(owner):  # type: ignore[no-untyped-def]
    return make_rich_campaign(owner=owner)


def test_every_system_is_shown_for_every_segment_equally_often_and_in_every_slot(rich) -> None:  # type: ignore[no-untyped-def]
    config = make_config(rich, "adequacy_fluency", outputs_per_screen=2, items_per_task=20)
    real = ItemOutput.objects.filter(item__task__config=config, kind=ItemKind.REAL)
    per_system = Counter(real.values_list("system__name", flat=True))
    assert set(per_system.values()) == {60}
    per_slot = Counter(real.values_list("system__name", "position"))
    assert set(per_slot.values()) == {30}
    pairs = set(real.values_list("item__segment_id", "system_id"))
    assert len(pairs) == 60 * 4


def test_qc_items_copy_a_real_item_of_the_same_task(rich) -> None:  # type: ignore[no-untyped-def]
    config = make_config(rich, "direct_assessment", items_per_task=20, outputs_per_screen=1)
    qc = (
        Item.objects.filter(task__config=config)
        .exclude(kind=ItemKind.REAL)
        .select_related("original")
    )
    assert qc.exists()
    for item in qc:
        assert item.original.kind == ItemKind.REAL
        assert item.original.task_id == item.task_id
        assert item.segment_id == item.original.segment_id
        assert abs(item.position - item.original.position) >= 5  # about half of 20


def test_bad_references_keep_the_first_word_and_differ_from_their_original(rich) -> None:  # type: ignore[no-untyped-def]
    config = make_config(rich, "direct_assessment", items_per_task=20, outputs_per_screen=1)
    bad = ItemOutput.objects.filter(item__task__config=config, kind=ItemKind.BAD_REFERENCE)
    assert bad.count() >= 20
    for output in bad.select_related("original"):
        assert output.text != output.original.text
        assert output.text.split()[0] == output.original.text.split()[0]
        assert output.system_id == output.original.system_id


def test_reference_items_show_a_human_reference_as_an_output(rich) -> None:  # type: ignore[no-untyped-def]
    config = make_config(rich, "ranking", items_per_task=20, mode="bilingual")
    outputs = ItemOutput.objects.filter(item__task__config=config, item__kind=ItemKind.REFERENCE)
    refs = outputs.filter(kind=ItemKind.REFERENCE).select_related("reference", "item")
    assert refs.exists()
    for output in refs:
        assert output.text == output.reference.text
        assert output.reference.segment_id == output.item.segment_id
    # The other outputs of a reference item repeat the original's outputs.
    assert outputs.exclude(kind=ItemKind.REFERENCE).filter(kind=ItemKind.REPEAT).exists()


def test_monolingual_screens_use_the_second_reference_as_an_output(rich) -> None:  # type: ignore[no-untyped-def]
    config = make_config(rich, "adequacy_fluency", mode="monolingual", items_per_task=20)
    indexes = set(
        ItemOutput.objects.filter(item__task__config=config, kind=ItemKind.REFERENCE).values_list(
            "reference__index", flat=True
        )
    )
    assert indexes == {1}


def test_building_twice_gives_the_same_tasks(rich) -> None:  # type: ignore[no-untyped-def]
    config = make_config(rich, "adequacy_fluency", items_per_task=15)

    def snapshot() -> list[tuple[object, ...]]:
        return list(
            ItemOutput.objects.filter(item__task__config=config)
            .order_by("item__task__position", "item__position", "position")
            .values_list("item__task__position", "item__position", "kind", "system__name", "text")
        )

    first = snapshot()
    tasks_build(config=config)
    assert snapshot() == first


def test_tasks_cannot_be_rebuilt_once_an_annotator_started(rich, annotator) -> None:  # type: ignore[no-untyped-def]
    rich.annotators.add(annotator)
    config = make_config(rich, "ranking")
    assert task_assign_next(config=config, annotator=annotator) is not None
    with pytest.raises(TaskError, match="cannot be rebuilt"):
        tasks_build(config=config)


def test_a_mode_that_shows_a_reference_needs_references(owner) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner, name="no refs")
    Reference.objects.filter(segment__campaign=campaign).delete()
    config = make_config(campaign, "adequacy_fluency", mode="monolingual", build=False)
    with pytest.raises(TaskError, match="has none"):
        tasks_build(config=config)
    assert not Task.objects.filter(config=config).exists()


def test_a_mode_that_shows_a_reference_needs_one_for_every_segment(owner) -> None:  # type: ignore[no-untyped-def]
    # Before, the screen of a segment without a reference showed "None" as the reference.
    campaign = make_rich_campaign(owner=owner, name="one ref missing")
    segment = campaign.segments.select_related("document").order_by("position")[7]
    Reference.objects.filter(segment=segment, index=0).delete()
    config = make_config(campaign, "adequacy_fluency", mode="monolingual", build=False)
    total = campaign.segments.count()
    expected = (
        f"This mode shows a reference, but 1 of {total} segments have none (the first: "
        f"document {segment.document.external_id}, segment {segment.external_id})."
    )
    with pytest.raises(TaskError) as refused:
        tasks_build(config=config)
    assert str(refused.value).startswith(expected)
    with translation.override("de"), pytest.raises(TaskError) as refused:
        tasks_build(config=config)
    assert str(refused.value).startswith(
        f"Dieser Modus zeigt eine Referenz, aber 1 von {total} Segmenten haben keine"
    )
    assert not Task.objects.filter(config=config).exists()
    # A mode that shows the source does not need them.
    bilingual = make_config(
        campaign, "adequacy_fluency", mode="bilingual", name="bilingual", build=False
    )
    assert tasks_build(config=bilingual).tasks > 0


@pytest.mark.parametrize("with_references", [True, False])
def test_bad_references_need_a_second_segment_to_borrow_from(owner, with_references) -> None:  # type: ignore[no-untyped-def]
    # Before, a campaign of one segment answered the build with a server error.
    campaign = make_rich_campaign(owner=owner, name="one segment")
    first = campaign.segments.order_by("position").first()
    campaign.segments.exclude(pk=first.pk).delete()
    if not with_references:
        Reference.objects.filter(segment__campaign=campaign).delete()
    config = make_config(
        campaign, "direct_assessment", build=False, qc_bad_reference=10, items_per_task=10
    )
    with pytest.raises(TaskError, match="fewer than two segments have one") as refused:
        tasks_build(config=config)
    donor = "reference" if with_references else "translation by the first system"
    assert f"another segment's {donor}" in str(refused.value)
    assert not Task.objects.filter(config=config).exists()
    config.qc_bad_reference = 0
    config.save()
    assert tasks_build(config=config).tasks > 0


def test_task_sizes_add_up(rich) -> None:  # type: ignore[no-untyped-def]
    config = make_config(rich, "direct_assessment", items_per_task=100, outputs_per_screen=1)
    tasks = list(Task.objects.filter(config=config))
    assert [t.size for t in tasks] == [Item.objects.filter(task=t).count() for t in tasks]
    # 240 real screens: three tasks of 80 real items each.
    assert len(tasks) == 3
    assert all(t.size == 100 for t in tasks)


def test_a_build_counts_the_words_of_each_reference_once(rich, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Every bad reference counted the words of every segment's reference again to pick its
    # donor: a build was quadratic in the segments (a 2,000-segment, 15-system campaign took
    # three minutes to build, past the web server's timeout).
    counted: list[str] = []
    unit_offsets = taskplan._unit_offsets

    def counting(text: str, character_based: bool) -> list[tuple[int, int]]:
        counted.append(text)
        return unit_offsets(text, character_based)

    monkeypatch.setattr(taskplan, "_unit_offsets", counting)
    config = make_config(rich, "direct_assessment", items_per_task=100, outputs_per_screen=1)
    bad = ItemOutput.objects.filter(item__task__config=config, kind=ItemKind.BAD_REFERENCE).count()
    assert bad >= 20
    # Each reference once, then per bad reference its output and its donor.
    assert len(counted) <= Segment.objects.filter(campaign=rich).count() + 2 * bad


def test_reference_items_need_the_reference_on_every_segment_they_land_on(owner) -> None:  # type: ignore[no-untyped-def]
    # Before, a build whose reference item fell on a segment without the reference shown
    # ended in a KeyError (a server error for the worker's task).
    campaign = make_rich_campaign(owner=owner, name="a reference missing")
    segments = list(campaign.segments.select_related("document").order_by("position"))
    Reference.objects.filter(segment__in=segments[1:], index=0).delete()
    config = make_config(
        campaign,
        "direct_assessment",
        build=False,
        qc_reference=10,
        qc_bad_reference=0,
        items_per_task=10,
    )
    with pytest.raises(TaskError) as refused:
        tasks_build(config=config)
    message = str(refused.value)
    assert message.startswith(
        f"Items with the reference as output show a segment's reference, but "
        f"{len(segments) - 1} of {len(segments)} segments have none (the first: document "
        f"{segments[1].document.external_id}, segment {segments[1].external_id})."
    )
    assert "set “references as output per 100 items” to 0" in message
    assert not Task.objects.filter(config=config).exists()
    config.qc_reference = 0
    config.save()
    assert tasks_build(config=config).tasks > 0
