"""What a protocol's QC mix and task size let the bad-reference test tell apart: the
bad-reference pairs one worker's task holds, the chance that a careful worker passes and a
random clicker fails (:mod:`evalcore.human.qc_power`, with the campaign's QC test and
threshold), and the warnings the setup page shows when a task holds no pair to test or the test
is too weak.

A bad-reference item degrades every output of its screen for score kinds (one for rankings),
and on document screens the QC mix is counted in screens, each bad reference a whole window of
segments: so the pairs are the bad-reference items of a full task (``qc_counts``, as the build
plans them) times the outputs or segments each degrades.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from django.utils.translation import gettext as _

from annotation.analysis.families.registry import family_of_protocol
from annotation.analysis.selectors import campaign_analysis_settings
from annotation.analysis.settings import AnalysisSettings
from annotation.models import Campaign, ProtocolConfig, Segment, System
from annotation.tasking.plan import (
    BAD_REFERENCE,
    REAL,
    QcMix,
    document_screens,
    document_windows,
    qc_counts,
    windows_per_task,
)
from evalcore.human.qc_power import LOW_POWER, TARGET, QCPower, pairs_for_target, qc_power


@dataclass(frozen=True)
class ConfigQCPower:
    """The QC figures of one protocol config for a full task of one worker.

    ``bad_references`` counts bad-reference items (screens), ``pairs`` the (original, bad
    reference) pairs they give per criterion; ``needed`` is the fewest pairs that reach
    :data:`~evalcore.human.qc_power.TARGET` with this test (None: none within reach).
    """

    bad_references: int
    pairs: int
    power: QCPower
    needed: int | None

    @property
    def careful_text(self) -> str:
        return percent(self.power.careful_pass)

    @property
    def random_text(self) -> str:
        return percent(self.power.random_fail)

    @property
    def warnings(self) -> list[str]:
        """What is wrong with these settings, in words (empty: nothing)."""
        if self.bad_references == 0:
            return [
                _(
                    "A task of these settings holds no bad-reference item: the quality test "
                    "cannot judge anyone, and every crowd worker gets the pass code under the "
                    "default rule. Raise the bad references per 100 items or the task size."
                )
            ]
        if not self.power.testable:
            return [
                _(
                    "A task of these settings holds one bad-reference pair: the quality test "
                    "needs at least two, so it cannot judge anyone."
                )
            ]
        if self.power.low:
            return [
                _(
                    "The quality test is weak with %(pairs)d bad-reference pairs per task "
                    "(below %(low)d %%): a careful worker passes %(careful)s and a random "
                    "clicker fails %(random)s. About %(needed)s pairs reach %(target)d %%."
                )
                % {
                    "pairs": self.pairs,
                    "low": round(100 * LOW_POWER),
                    "careful": percent(self.power.careful_pass),
                    "random": percent(self.power.random_fail),
                    "needed": self.needed if self.needed is not None else "> 200",
                    "target": round(100 * TARGET),
                }
            ]
        return []


def percent(share: float) -> str:
    """A share as a whole percentage, never rounded up to 100 % or down to 0 % unless exact."""
    value = 100 * share
    shown = round(value)
    if shown == 100 and value < 100:
        shown = 99
    elif shown == 0 and value > 0:
        shown = 1
    return f"{shown} %"


def config_qc_power(
    *,
    config: ProtocolConfig,
    settings: AnalysisSettings,
    n_systems: int,
    places: Sequence[tuple[int, int]],
) -> ConfigQCPower | None:
    """The QC figures of ``config`` with the QC test and threshold of ``settings`` (its
    campaign's); ``n_systems`` and ``places`` (each segment's document and place in it) are
    the campaign's. None for a
    ranking kind (the models are of scores) and for document screens before the source text is
    uploaded (the windows' length is not known yet)."""
    definition = config.definition
    if not family_of_protocol(config.protocol).qc_power_applies:
        return None
    mix = QcMix(config.qc_bad_reference, config.qc_repeat, config.qc_reference)
    if config.shows_documents:
        if not places:
            return None
        windows = document_windows(places, config.document_window)
        screens = document_screens(windows, 1)
        counts = qc_counts(windows_per_task(screens, config.items_per_task), mix)
        per_item = sum(len(w) for w in windows) / len(windows)
    else:
        counts = qc_counts(config.items_per_task, mix)
        width = definition.outputs_per_screen(config.outputs_per_screen)
        if n_systems:
            width = min(width, n_systems)
        per_item = len(definition.degraded_positions(width, np.random.default_rng(0)))
    # Each copy needs a real item of its own to copy (bad references are placed first).
    bad = min(counts[BAD_REFERENCE], max(1, counts[REAL]))
    pairs = round(bad * per_item)
    criteria = len(definition.criteria)
    return ConfigQCPower(
        bad_references=bad,
        pairs=pairs,
        power=qc_power(
            pairs, test=settings.qc_test, threshold=settings.threshold, criteria=criteria
        ),
        needed=pairs_for_target(
            test=settings.qc_test, threshold=settings.threshold, criteria=criteria
        ),
    )


def campaign_qc_powers(
    *, campaign: Campaign, configs: Iterable[ProtocolConfig]
) -> dict[int, ConfigQCPower | None]:
    """:func:`config_qc_power` of every config of ``campaign``, by config id (two queries)."""
    configs = list(configs)
    settings = campaign_analysis_settings(campaign=campaign)
    n_systems, places = _campaign_shape(campaign, documents=any(c.shows_documents for c in configs))
    return {
        c.pk: config_qc_power(config=c, settings=settings, n_systems=n_systems, places=places)
        for c in configs
    }


def campaign_qc_power(*, campaign: Campaign, config: ProtocolConfig) -> ConfigQCPower | None:
    """:func:`config_qc_power` of one config of ``campaign``."""
    return campaign_qc_powers(campaign=campaign, configs=[config])[config.pk]


def _campaign_shape(campaign: Campaign, *, documents: bool) -> tuple[int, list[tuple[int, int]]]:
    """The campaign's number of systems and, when ``documents``, each segment's document and
    place in it; kept on the ``campaign`` object, so that a page that asks for each of its
    configs reads them once."""
    cached = campaign.__dict__.get("_qc_shape")
    if cached is not None and (cached[1] or not documents):
        return cached
    n_systems = cached[0] if cached else System.objects.filter(campaign=campaign).count()
    places = (
        list(
            Segment.objects.filter(campaign=campaign)
            .order_by("position")
            .values_list("document_id", "position_in_document")
        )
        if documents
        else []
    )
    campaign.__dict__["_qc_shape"] = (n_systems, places)
    return n_systems, places
