"""Merged identical outputs when tasks are built: each distinct text of a segment shown once
on a screen and credited to every system that produced it, screens filled with distinct
texts, what merging saved in the build's summary, and the switch that turns it off."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pytest

from annotation.models import (
    ItemKind,
    ItemOutput,
    ItemOutputCredit,
    ProtocolConfig,
    TaskBuild,
)
from annotation.tasking.background import task_build_run
from annotation.tasking.merging import merged_screens, normalised_text, output_groups
from annotation.tasking.plan import QcMix, balanced_screens, plan_tasks
from tests.factories import make_config, make_rich_campaign
from tests.merge_factories import MERGE_GROUPS, MERGE_OUTPUTS, MERGE_SYSTEMS, make_merge_campaign

pytestmark = pytest.mark.django_db

NO_QC = {"qc_bad_reference": 0, "qc_repeat": 0, "qc_reference": 0}


@pytest.fixture
def merge_campaign(owner):  # type: ignore[no-untyped-def]
    return make_merge_campaign(owner=owner)


def _shown(config: ProtocolConfig) -> dict[int, list[list[tuple[str, list[str]]]]]:
    """Per segment position, its real screens: per slot the system shown and those credited."""
    screens: dict[int, list[list[tuple[str, list[str]]]]] = defaultdict(list)
    credits: dict[int, list[str]] = defaultdict(list)
    for output, system in ItemOutputCredit.objects.filter(
        output__item__task__config=config
    ).values_list("output_id", "system__name"):
        credits[output].append(system)
    by_item: dict[int, list[tuple[str, list[str]]]] = defaultdict(list)
    segment_of = {}
    for pk, item, position, system in (
        ItemOutput.objects.filter(item__task__config=config, kind=ItemKind.REAL)
        .order_by("item_id", "position")
        .values_list("pk", "item_id", "item__segment__position", "system__name")
    ):
        by_item[item].append((system, sorted(credits[pk])))
        segment_of[item] = position
    for item, slots in by_item.items():
        screens[segment_of[item]].append(slots)
    return screens


def test_texts_are_the_same_after_nfc_and_whitespace_normalisation() -> None:
    assert normalised_text(" Cafe\u0301 au \t lait.\n") == "Café au lait."
    assert output_groups(MERGE_OUTPUTS[0]) == [(0, 1, 2), (3,), (4,)]
    assert [output_groups(texts) for texts in MERGE_OUTPUTS] == MERGE_GROUPS


def test_identical_outputs_are_shown_once_and_credited_to_every_system(merge_campaign) -> None:  # type: ignore[no-untyped-def]
    config = make_config(
        merge_campaign, "adequacy_fluency", outputs_per_screen=5, merge_identical=True, **NO_QC
    )
    screens = _shown(config)
    for segment, groups in enumerate(MERGE_GROUPS):
        # k = 5 holds every distinct text of a segment: one screen, each text once.
        [screen] = screens[segment]
        assert len(screen) == len(groups)
        got = sorted(tuple(sorted([shown, *credited])) for shown, credited in screen)
        want = sorted(tuple(MERGE_SYSTEMS[i] for i in group) for group in groups)
        assert got == want
    credit = ItemOutputCredit.objects.filter(
        output__item__task__config=config, output__item__segment__position=0
    ).select_related("output", "translation")
    # The credited translation is the credited system's own, with the same normalised text.
    assert {c.system.name for c in credit} == {"bravo", "charlie"}
    for c in credit:
        assert normalised_text(c.translation.text) == normalised_text(c.output.text)
        assert c.translation.run_id == c.run_id


def test_screens_of_k_outputs_show_k_distinct_texts_when_the_segment_has_them(
    merge_campaign,  # type: ignore[no-untyped-def]
) -> None:
    config = make_config(
        merge_campaign, "adequacy_fluency", outputs_per_screen=3, merge_identical=True, **NO_QC
    )
    screens = _shown(config)
    for segment, groups in enumerate(MERGE_GROUPS):
        width = min(3, len(groups))
        # ceil(groups / k) screens, each of min(k, groups) different texts.
        assert len(screens[segment]) == -(-len(groups) // 3)
        covered = set()
        for screen in screens[segment]:
            assert len(screen) == width
            shown = [
                normalised_text(MERGE_OUTPUTS[segment][MERGE_SYSTEMS.index(s)]) for s, _ in screen
            ]
            assert len(set(shown)) == width
            for system, credited in screen:
                covered.update([system, *credited])
        # Every system's translation is shown or credited.
        assert covered == set(MERGE_SYSTEMS)


def test_a_ranking_segment_with_one_distinct_text_gets_no_screen(merge_campaign) -> None:  # type: ignore[no-untyped-def]
    config = make_config(
        merge_campaign, "ranking", outputs_per_screen=5, merge_identical=True, **NO_QC
    )
    screens = _shown(config)
    assert 3 not in screens  # every system said "Same everywhere."
    assert sorted(screens) == [0, 1, 2, 4, 5]


def test_the_build_summary_says_what_merging_saved(merge_campaign, owner, client) -> None:  # type: ignore[no-untyped-def]
    config = make_config(
        merge_campaign,
        "direct_assessment",
        build=False,
        merge_identical=True,
        annotations_per_task=2,
        items_per_task=100,
        **NO_QC,
    )
    build = TaskBuild.objects.create(config=config, requested_by=owner)
    done = task_build_run(build_id=build.pk)
    assert done is not None
    assert done.status == TaskBuild.Status.DONE
    # Direct assessment shows one output a screen: 6 × 5 = 30 screens unmerged; merged one per
    # distinct text, 3 + 5 + 4 + 1 + 5 + 4 = 22. Each saved screen is one output fewer to
    # judge, and two annotators judge every task.
    assert done.items == 22
    assert (done.saved_screens, done.saved_judgments) == (16, 16)
    client.force_login(owner)
    answer = client.get(f"/campaigns/{merge_campaign.pk}/annotation/builds.json").json()
    [state] = answer["builds"]
    assert (state["saved_screens"], state["saved_judgments"]) == (16, 16)
    assert "Merging identical outputs saved 16 screens and 16 judgments" in state["message"]
    page = client.get(f"/campaigns/{merge_campaign.pk}/annotation/").content.decode()
    assert "Merging identical outputs saved 16 screens and 16 judgments" in page
    api = client.get(f"/api/campaigns/{merge_campaign.pk}/builds/").json()
    assert [(b["saved_screens"], b["saved_judgments"], b["items"]) for b in api["builds"]] == [
        (16, 16, 22)
    ]


def test_merging_is_on_by_default() -> None:
    assert ProtocolConfig().merge_identical is True


def test_screens_of_several_outputs_save_the_outputs_merged(merge_campaign, owner) -> None:  # type: ignore[no-untyped-def]
    # adequacy/fluency with k = 5: 6 screens either way, but 30 outputs shown unmerged
    # against 3 + 5 + 4 + 1 + 5 + 4 = 22 merged: 8 outputs fewer to judge.
    config = make_config(
        merge_campaign,
        "adequacy_fluency",
        build=False,
        outputs_per_screen=5,
        merge_identical=True,
        **NO_QC,
    )
    build = TaskBuild.objects.create(config=config, requested_by=owner)
    done = task_build_run(build_id=build.pk)
    assert done is not None
    assert (done.saved_screens, done.saved_judgments) == (0, 8)


def test_switched_off_every_system_is_shown_as_before(merge_campaign) -> None:  # type: ignore[no-untyped-def]
    config = make_config(
        merge_campaign, "adequacy_fluency", outputs_per_screen=5, merge_identical=False, **NO_QC
    )
    assert not ItemOutputCredit.objects.filter(output__item__task__config=config).exists()
    shown = Counter(
        ItemOutput.objects.filter(item__task__config=config, kind=ItemKind.REAL).values_list(
            "item__segment__position", "system__name"
        )
    )
    assert shown == Counter(
        {(s, name): 1 for s in range(len(MERGE_OUTPUTS)) for name in MERGE_SYSTEMS}
    )


def test_without_identical_outputs_merging_changes_nothing(owner) -> None:  # type: ignore[no-untyped-def]
    # The suite's demo data has identical outputs; with one run per system shown per segment
    # they are few, so compare the plans directly on data without any.
    groups = [[(s,) for s in range(4)] for _ in range(10)]
    merged = merged_screens(groups, 4, 3, np.random.default_rng(7))
    assert merged == balanced_screens(10, 4, 3, np.random.default_rng(7))


def test_switched_off_the_build_is_exactly_the_unmerged_plan(owner) -> None:  # type: ignore[no-untyped-def]
    # The rich campaign's four systems have identical outputs now and then. Off, every task,
    # item and slot is the unmerged plan's, drawn from the seed as before merging existed
    # (QC copies included); on, the same data shows fewer outputs, some credited.
    campaign = make_rich_campaign(owner=owner)
    off = make_config(campaign, "adequacy_fluency", name="off", merge_identical=False)
    on = make_config(campaign, "adequacy_fluency", name="on", merge_identical=True)
    rng = np.random.default_rng(off.seed)
    systems = sorted(campaign.systems.values_list("name", flat=True))
    plans = plan_tasks(
        balanced_screens(60, len(systems), off.outputs_per_screen, rng),
        items_per_task=off.items_per_task,
        mix=QcMix(off.qc_bad_reference, off.qc_repeat, off.qc_reference),
        rng=rng,
    )
    want = [
        (t, i, item.kind, item.screen.segment, tuple(systems[s] for s in item.screen.systems))
        for t, plan in enumerate(plans)
        for i, item in enumerate(plan.items)
    ]
    slots: dict[tuple[int, int], list[str]] = defaultdict(list)
    kinds = {}
    for task, position, kind, segment, system in (
        ItemOutput.objects.filter(item__task__config=off)
        .exclude(kind=ItemKind.REFERENCE)
        .order_by("item__task__position", "item__position", "position")
        .values_list(
            "item__task__position",
            "item__position",
            "item__kind",
            "item__segment__position",
            "system__name",
        )
    ):
        slots[(task, position)].append(system)
        kinds[(task, position)] = (kind, segment)
    got = [(t, i, *kinds[(t, i)], tuple(slots[(t, i)])) for t, i in sorted(kinds)]
    real_want = [w for w in want if w[2] != ItemKind.REFERENCE]
    assert [g for g in got if g[2] != ItemKind.REFERENCE] == real_want
    assert not ItemOutputCredit.objects.filter(output__item__task__config=off).exists()
    assert ItemOutputCredit.objects.filter(output__item__task__config=on).exists()
    assert ItemOutput.objects.filter(item__task__config=on).count() < (
        ItemOutput.objects.filter(item__task__config=off).count()
    )
