"""Deterministic synthetic campaigns with a known truth, for tests, benchmarks and demos.

Scores: every annotator works through tasks of 100 items, 80 real, 10 bad references, 5 repeats
and 5 references (DESIGN §4). A diligent annotator perceives quality = system quality + segment
difficulty + noise and maps it onto the scale with a personal leniency (offset) and spread
(scale factor), the differences Koehn Fig. 8.3 shows; a careless annotator answers uniformly at
random. Bad references are perceived ``degradation`` lower than their originals, references
``reference_bonus`` higher than the best system.

Rankings: screens of ``screen_size`` outputs of different systems on one segment, ranked by the
perceived 1–5 quality (equal scores tie); every 20th screen is repeated later in the task, and
with ``degradation`` another copies an earlier screen with one output degraded (a bad
reference, the other outputs repeats).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from evalcore.human.judgments import BoolArray, FloatArray, IntArray, ItemType, Judgments

Scale = Literal["0-100", "1-5"]

# Task layout (per 100 items): positions of each kind of item inside a task.
_TASK = 100
_REAL = 80
_BAD = 10
_REPEAT = 5
_REFERENCE = 5


@dataclass(frozen=True)
class SyntheticCampaign:
    """A synthetic judgments table and the truth it was drawn from.

    ``system_quality`` is indexed by system code (the reference system, code ``n_systems - 1``
    for score campaigns, has NaN); ``careless`` marks the annotators who answered at random.
    """

    judgments: Judgments
    system_quality: FloatArray
    careless: BoolArray


def synthetic_scores(
    *,
    n_annotators: int,
    n_systems: int,
    n_segments: int,
    tasks_per_annotator: int,
    careless: npt.ArrayLike = (),
    scale: Scale = "0-100",
    quality_spread: float = 20.0,
    noise: float = 15.0,
    degradation: float = 30.0,
    reference_bonus: float = 10.0,
    seed: int = 0,
) -> SyntheticCampaign:
    """A direct-assessment (0–100) or adequacy-style (1–5) campaign; one row per screen.

    ``n_systems`` MT systems get qualities evenly spaced over ``quality_spread`` points (on the
    0–100 scale; 1–5 scores are the 0–100 scores mapped onto five bins), best = code 0; one more
    system code (``n_systems``) is the human reference shown in REFERENCE items.
    Judgments: n_annotators × tasks_per_annotator × 100 rows.
    """
    rng = np.random.default_rng(seed)
    careless_mask = _careless_mask(n_annotators, careless)
    quality = np.linspace(quality_spread / 2, -quality_spread / 2, n_systems)
    difficulty = rng.normal(0.0, 8.0, n_segments)
    leniency = rng.normal(0.0, 10.0, n_annotators)
    spread = rng.uniform(0.6, 1.4, n_annotators)

    annotator, item_type, original = _task_layout(n_annotators, tasks_per_annotator)
    n = len(annotator)
    segment, system = _task_items(rng, item_type, original, n_segments, n_systems)

    latent = _score_latent(
        quality, difficulty, segment, system, item_type, reference_bonus, degradation
    )
    perceived = 50.0 + spread[annotator] * latent + leniency[annotator] + rng.normal(0, noise, n)
    random_answer = rng.uniform(0.0, 100.0, n)
    value = np.where(careless_mask[annotator], random_answer, perceived)
    value = np.clip(value, 0.0, 100.0)
    score = np.round(value) if scale == "0-100" else np.minimum(1 + value // 20, 5)

    seconds = _score_seconds(rng, n)
    return SyntheticCampaign(
        judgments=Judgments.from_arrays(
            annotator=annotator,
            segment=segment,
            system=system,
            score=score,
            item_type=item_type,
            original=original,
            seconds=seconds,
            n_annotators=n_annotators,
            n_segments=n_segments,
            n_systems=n_systems + 1,
        ),
        system_quality=np.r_[quality, np.nan],
        careless=careless_mask,
    )


def _careless_mask(n_annotators: int, careless: npt.ArrayLike) -> BoolArray:
    """True for the annotator codes listed in ``careless``."""
    careless_mask = np.zeros(n_annotators, dtype=bool)
    careless_mask[np.asarray(careless, dtype=np.int64)] = True
    return careless_mask


def _task_layout(
    n_annotators: int, tasks_per_annotator: int
) -> tuple[IntArray, IntArray, IntArray]:
    """Annotator, item type and original row of every row of every task (no draws).

    Each task holds ``_TASK`` rows: real items, then bad references, repeats and references.
    """
    n_tasks = n_annotators * tasks_per_annotator
    task_annotator = np.repeat(np.arange(n_annotators), tasks_per_annotator)
    annotator = np.repeat(task_annotator, _TASK)
    position = np.tile(np.arange(_TASK), n_tasks)
    task_start = np.repeat(np.arange(n_tasks) * _TASK, _TASK)
    item_type = np.select(
        [position < _REAL, position < _REAL + _BAD, position < _REAL + _BAD + _REPEAT],
        [ItemType.REAL, ItemType.BAD_REF, ItemType.REPEAT],
        ItemType.REFERENCE,
    ).astype(np.int64)
    # Bad references copy the task's first 10 real items, repeats the next 5.
    original = np.select(
        [item_type == ItemType.BAD_REF, item_type == ItemType.REPEAT],
        [task_start + position - _REAL, task_start + position - (_REAL + _BAD) + _BAD],
        -1,
    ).astype(np.int64)
    return annotator, item_type, original


def _task_items(
    rng: np.random.Generator,
    item_type: IntArray,
    original: IntArray,
    n_segments: int,
    n_systems: int,
) -> tuple[IntArray, IntArray]:
    """Segment and system of every row: drawn for real items, copied from the original for
    bad references and repeats; references show the reference system (code ``n_systems``)."""
    n = len(item_type)
    segment = rng.integers(0, n_segments, n)
    system = rng.integers(0, n_systems, n)
    copies = original >= 0
    segment[copies] = segment[original[copies]]
    system[copies] = system[original[copies]]
    reference = item_type == ItemType.REFERENCE
    system[reference] = n_systems
    return segment, system


def _score_latent(
    quality: FloatArray,
    difficulty: FloatArray,
    segment: IntArray,
    system: IntArray,
    item_type: IntArray,
    reference_bonus: float,
    degradation: float,
) -> FloatArray:
    """True quality of every shown output: system quality + segment difficulty; references
    ``reference_bonus`` above the best system, bad references ``degradation`` below."""
    n_systems = len(quality)
    reference = item_type == ItemType.REFERENCE
    latent = quality[np.minimum(system, n_systems - 1)] + difficulty[segment]
    latent[reference] = quality[0] + reference_bonus + difficulty[segment[reference]]
    latent[item_type == ItemType.BAD_REF] -= degradation
    return latent


def _score_seconds(rng: np.random.Generator, n: int) -> FloatArray:
    """Time spent per row: gamma-distributed, with 1% idle rows (5–50 minutes more)."""
    seconds: FloatArray = rng.gamma(2.0, 10.0, n)
    idle = rng.random(n) < 0.01
    seconds[idle] += rng.uniform(300.0, 3000.0, int(idle.sum()))
    return seconds


def synthetic_rankings(
    *,
    n_annotators: int,
    n_systems: int,
    n_segments: int,
    screens_per_annotator: int,
    screen_size: int = 5,
    careless: npt.ArrayLike = (),
    quality_spread: float = 1.5,
    noise: float = 0.8,
    degradation: float = 0.0,
    seed: int = 0,
) -> SyntheticCampaign:
    """A relative-ranking campaign: each screen ranks ``screen_size`` different systems' outputs
    of one segment (1 = best, ties share the better rank). Every 20th screen of an annotator is
    a REPEAT of the screen 10 before it (same outputs, fresh perception noise).

    With ``degradation > 0`` every 10th screen (positions 14, 24, 34, …) copies the screen 7
    before it with one output, in a random slot, a bad reference that a
    diligent annotator perceives ``degradation`` points lower (on the 1–5 scale); the others are
    REPEAT rows. Without it the draws are those of earlier versions (same seed, same table)."""
    rng = np.random.default_rng(seed)
    careless_mask = _careless_mask(n_annotators, careless)
    quality = np.linspace(quality_spread / 2, -quality_spread / 2, n_systems)
    difficulty = rng.normal(0.0, 0.5, n_segments)
    leniency = rng.normal(0.0, 0.3, n_annotators)
    screens = _draw_screens(
        rng,
        n_annotators=n_annotators,
        n_systems=n_systems,
        n_segments=n_segments,
        screens_per_annotator=screens_per_annotator,
        screen_size=screen_size,
        with_bad=degradation > 0,
    )
    n_screens = len(screens.source)

    annotator = np.repeat(screens.annotator, screen_size)
    screen = np.repeat(np.arange(n_screens), screen_size)
    segment = np.repeat(screens.segment, screen_size)
    system = screens.systems.ravel()
    latent = quality[system] + difficulty[segment] + leniency[annotator]
    degraded = np.zeros(n_screens * screen_size, dtype=bool)
    if degradation > 0:
        degraded = _degraded_outputs(rng, screens.is_bad, screen_size)
        latent = latent - degradation * degraded
    perceived = np.clip(np.round(3.0 + latent + rng.normal(0.0, noise, latent.shape[0])), 1, 5)
    perceived = np.where(careless_mask[annotator], rng.integers(1, 6, latent.shape[0]), perceived)
    table = perceived.reshape(n_screens, screen_size)
    # Rank = 1 + number of outputs on the screen perceived strictly better.
    rank = 1 + (table[:, np.newaxis, :] > table[:, :, np.newaxis]).sum(axis=2)

    item_type, original = _ranking_item_types(screens, degraded, screen_size)
    return SyntheticCampaign(
        judgments=Judgments.from_arrays(
            annotator=annotator,
            segment=segment,
            system=system,
            score=rank.ravel().astype(np.float64),
            item_type=item_type,
            original=original,
            screen=screen,
            seconds=np.repeat(rng.gamma(2.0, 20.0, n_screens), screen_size),
            n_annotators=n_annotators,
            n_segments=n_segments,
            n_systems=n_systems,
        ),
        system_quality=quality,
        careless=careless_mask,
    )


@dataclass(frozen=True)
class _Screens:
    """Per screen: its annotator, segment and systems (after copying), which kind of copy it is
    and the screen it copies (``source``, the screen itself for an ordinary screen)."""

    annotator: IntArray
    segment: IntArray
    systems: IntArray
    is_repeat: BoolArray
    is_bad: BoolArray
    source: IntArray


def _draw_screens(
    rng: np.random.Generator,
    *,
    n_annotators: int,
    n_systems: int,
    n_segments: int,
    screens_per_annotator: int,
    screen_size: int,
    with_bad: bool,
) -> _Screens:
    """Every annotator's screens: a random segment and ``screen_size`` distinct systems each;
    repeats (and, ``with_bad``, bad-reference screens) copy an earlier screen's segment and
    systems."""
    n_screens = n_annotators * screens_per_annotator
    screen_annotator = np.repeat(np.arange(n_annotators), screens_per_annotator)
    screen_position = np.tile(np.arange(screens_per_annotator), n_annotators)
    screen_segment = rng.integers(0, n_segments, n_screens)
    # k distinct systems per screen: the first k of a random permutation.
    screen_systems = np.argsort(rng.random((n_screens, n_systems)), axis=1)[:, :screen_size]
    is_repeat = (screen_position % 20 == 19) & (screen_position >= 10)
    is_bad = (screen_position % 10 == 4) & (screen_position >= 10) & with_bad
    source = np.where(is_repeat, np.arange(n_screens) - 10, np.arange(n_screens))
    source = np.where(is_bad, np.arange(n_screens) - 7, source)
    return _Screens(
        annotator=screen_annotator,
        segment=screen_segment[source],
        systems=screen_systems[source],
        is_repeat=is_repeat,
        is_bad=is_bad,
        source=source,
    )


def _degraded_outputs(rng: np.random.Generator, is_bad: BoolArray, screen_size: int) -> BoolArray:
    """One output per bad-reference screen, in a random slot, is the degraded one (a slot is
    drawn for every screen)."""
    n_screens = len(is_bad)
    slot = rng.integers(0, screen_size, n_screens)
    degraded: BoolArray = (np.repeat(is_bad, screen_size)) & (
        np.tile(np.arange(screen_size), n_screens) == np.repeat(slot, screen_size)
    )
    return degraded


def _ranking_item_types(
    screens: _Screens, degraded: BoolArray, screen_size: int
) -> tuple[IntArray, IntArray]:
    """Item type and original row of every output: outputs of copied screens are REPEATs of the
    same slot on the source screen, the degraded one a BAD_REF; ordinary outputs are REAL."""
    n_screens = len(screens.source)
    copied = screens.is_repeat | screens.is_bad
    item_type = np.repeat(np.where(copied, ItemType.REPEAT, ItemType.REAL), screen_size)
    item_type = np.where(degraded, ItemType.BAD_REF, item_type)
    original_screen_row = np.repeat(screens.source * screen_size, screen_size) + np.tile(
        np.arange(screen_size), n_screens
    )
    original = np.where(item_type != ItemType.REAL, original_screen_row, -1)
    return item_type, original
