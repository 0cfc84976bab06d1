"""Task planning: the bad-reference span table, degraded outputs, balanced screens and QC items
placed about half a task from their originals — all deterministic from a seed."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from annotation.tasking.plan import (
    BAD_REFERENCE,
    REAL,
    REFERENCE,
    REPEAT,
    QcMix,
    bad_reference_span,
    balanced_screens,
    is_character_based,
    make_bad_reference,
    plan_tasks,
    qc_counts,
    reference_units,
)

# DESIGN §4 / WMT DA: 1→1, 2–5→2, 6–8→3, 9–15→4, 16–20→5, >20→6.
SPAN_TABLE = {1: 1, 2: 2, 5: 2, 6: 3, 8: 3, 9: 4, 15: 4, 16: 5, 20: 5, 21: 6, 40: 6}


@pytest.mark.parametrize(("length", "span"), SPAN_TABLE.items())
def test_the_bad_reference_span_follows_the_table(length: int, span: int) -> None:
    assert bad_reference_span(length) == span


@pytest.mark.parametrize(("length", "span"), SPAN_TABLE.items())
def test_character_based_scripts_double_the_span(length: int, span: int) -> None:
    assert bad_reference_span(length, character_based=True) == 2 * span


def test_chinese_and_japanese_count_characters_but_german_does_not() -> None:
    assert is_character_based("zh")
    assert is_character_based("ja-JP")
    assert not is_character_based("de")


REFERENCES = [
    "the cat sat on the mat",
    "a completely different sentence with many words in it today",
    "short one",
    "another donor phrase of reasonable length for testing",
]


@pytest.mark.parametrize("seed", range(30))
def test_a_bad_reference_keeps_the_first_word_and_takes_a_phrase_from_another_segment(
    seed: int,
) -> None:
    output = "the translation of the first segment has nine words"
    bad = make_bad_reference(
        output, segment=0, references=REFERENCES, rng=np.random.default_rng(seed)
    )
    words, degraded = output.split(), bad.text.split()
    assert bad.span == bad_reference_span(len(words)) == 4
    assert bad.start >= 1
    assert degraded[0] == words[0]
    assert len(degraded) == len(words)
    assert bad.donor != 0
    donor = REFERENCES[bad.donor].split()
    phrase = degraded[bad.start : bad.start + bad.span]
    assert any(donor[i : i + bad.span] == phrase for i in range(len(donor)))
    assert degraded[: bad.start] == words[: bad.start]
    assert degraded[bad.start + bad.span :] == words[bad.start + bad.span :]


def test_a_bad_reference_in_chinese_replaces_twice_as_many_characters() -> None:
    output = "我们明天去柏林旅行"  # 9 characters → span 4 → 8 characters
    refs = ["无关", "这是另一个完全不同的参考译文句子"]
    bad = make_bad_reference(
        output, segment=0, references=refs, rng=np.random.default_rng(1), character_based=True
    )
    assert bad.span == 8
    assert bad.text[0] == output[0]
    assert len(bad.text) == len(output)
    assert bad.text[bad.start : bad.start + 8] in refs[1]


@pytest.mark.parametrize("seed", range(20))
def test_a_bad_reference_in_mixed_script_text_changes_nothing_outside_its_span(seed: int) -> None:
    # Latin words, digits and spaces inside Chinese text stay exactly as they were: only the
    # replaced characters change (the old way re-joined the whole output without spaces).
    output = "我们 2024 年 5 月去 Berlin 旅行，参加 WMT 会议。"
    refs = ["无关", "这是 另一个 完全不同的参考译文句子"]
    bad = make_bad_reference(
        output, segment=0, references=refs, rng=np.random.default_rng(seed), character_based=True
    )
    units = [i for i, c in enumerate(output) if not c.isspace()]
    first, last = units[bad.start], units[bad.start + bad.span - 1]
    prefix, suffix = output[:first], output[last + 1 :]
    assert bad.text.startswith(prefix)
    assert bad.text.endswith(suffix)
    phrase = bad.text[len(prefix) : len(bad.text) - len(suffix)]
    assert phrase in refs[1]
    assert len([c for c in phrase if not c.isspace()]) == bad.span == 2 * 6  # 27 characters


def test_a_one_word_output_keeps_its_word_and_gets_the_phrase_appended() -> None:
    bad = make_bad_reference("Yes", segment=0, references=REFERENCES, rng=np.random.default_rng(0))
    assert bad.text.split()[0] == "Yes"
    assert len(bad.text.split()) == 2


@pytest.mark.parametrize(
    ("n_segments", "n_systems", "k"), [(60, 4, 5), (36, 6, 3), (40, 5, 1), (48, 12, 4)]
)
def test_screens_balance_systems_exactly_when_they_divide_evenly(
    n_segments: int, n_systems: int, k: int
) -> None:
    screens = balanced_screens(n_segments, n_systems, k, np.random.default_rng(7))
    width = min(k, n_systems)
    assert all(len(s.systems) == width for s in screens)
    assert all(len(set(s.systems)) == width for s in screens)
    shown = Counter(system for s in screens for system in s.systems)
    assert set(shown.values()) == {n_segments}
    slots = Counter((system, slot) for s in screens for slot, system in enumerate(s.systems))
    assert set(slots.values()) == {n_segments // width}, slots
    # Every system is shown for every segment.
    for segment in range(n_segments):
        assert {x for s in screens if s.segment == segment for x in s.systems} == set(
            range(n_systems)
        )


def test_screens_stay_balanced_within_one_when_systems_do_not_fill_the_screens() -> None:
    screens = balanced_screens(30, 7, 5, np.random.default_rng(3))
    shown = Counter(system for s in screens for system in s.systems)
    assert max(shown.values()) - min(shown.values()) <= 2
    slots = Counter((system, slot) for s in screens for slot, system in enumerate(s.systems))
    assert len(slots) == 7 * 5  # every system in every position
    assert max(slots.values()) - min(slots.values()) <= 1


def test_qc_counts_follow_the_default_mix() -> None:
    assert qc_counts(100, QcMix()) == {REAL: 80, BAD_REFERENCE: 10, REPEAT: 5, REFERENCE: 5}
    assert sum(qc_counts(37, QcMix()).values()) == 37
    assert qc_counts(10, QcMix()) == {REAL: 8, BAD_REFERENCE: 1, REPEAT: 1, REFERENCE: 0}


def plan(seed: int = 11, items: int = 100, n_segments: int = 400):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    screens = balanced_screens(n_segments, 5, 1, rng)
    return plan_tasks(screens, items_per_task=items, mix=QcMix(), rng=rng)


def test_tasks_hold_the_mix_and_every_qc_item_points_to_a_real_item_of_its_task() -> None:
    tasks = plan()
    assert len(tasks) == 25  # 2,000 real screens, 80 per task
    for task in tasks:
        kinds = Counter(item.kind for item in task.items)
        assert kinds == {REAL: 80, BAD_REFERENCE: 10, REPEAT: 5, REFERENCE: 5}
        for item in task.items:
            if item.kind == REAL:
                assert item.original is None
            else:
                original = task.items[item.original]
                assert original.kind == REAL
                assert original.screen == item.screen


def test_qc_items_are_placed_about_half_a_task_from_their_originals() -> None:
    distances = []
    for task in plan():
        size = len(task.items)
        for position, item in enumerate(task.items):
            if item.original is not None:
                d = abs(position - item.original)
                distances.append(min(d, size - d) / size)
    assert min(distances) >= 0.35
    assert np.mean(distances) == pytest.approx(0.5, abs=0.03)


def test_qc_positions_differ_between_tasks() -> None:
    patterns = {
        tuple(i for i, item in enumerate(task.items) if item.kind != REAL) for task in plan()
    }
    assert len(patterns) == 25


def test_the_same_seed_gives_the_same_tasks_and_another_seed_others() -> None:
    def signature(tasks):  # type: ignore[no-untyped-def]
        return [[(i.kind, i.screen, i.original) for i in t.items] for t in tasks]

    assert signature(plan(seed=5)) == signature(plan(seed=5))
    assert signature(plan(seed=5)) != signature(plan(seed=6))


def test_a_short_last_task_keeps_the_proportions() -> None:
    tasks = plan(n_segments=100, items=100)  # 500 screens: 6 full tasks and 20 reals left
    last = Counter(item.kind for item in tasks[-1].items)
    assert last[REAL] == 20
    assert last[BAD_REFERENCE] + last[REPEAT] + last[REFERENCE] == 5


def test_any_task_size_works() -> None:
    for size in (1, 3, 10, 250):
        tasks = plan(items=size, n_segments=60)
        assert sum(1 for t in tasks for i in t.items if i.kind == REAL) == 300


@pytest.mark.parametrize("seed", range(10))
def test_a_bad_reference_from_counted_references_is_the_one_made_without(seed: int) -> None:
    # A build counts the references' words once and hands the counts to every call.
    output = "the translation of the first segment has nine words"
    refs = [*REFERENCES, "   ", "two words"]
    counts = reference_units(refs)
    assert counts.tolist() == [len(r.split()) for r in refs]
    for segment in (0, 1):
        alone = make_bad_reference(
            output, segment=segment, references=refs, rng=np.random.default_rng(seed)
        )
        counted = make_bad_reference(
            output,
            segment=segment,
            references=refs,
            rng=np.random.default_rng(seed),
            donor_units=counts,
        )
        assert counted == alone
