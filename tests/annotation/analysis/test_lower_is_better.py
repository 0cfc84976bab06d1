"""A score criterion whose lower scores are better (an edit rate such as HTER: the share of
words a post-editor changed) is analysed as the scores family analyses any other, in the
oriented space: its QC expects bad references to score HIGHER than their originals and its best
system has the lowest mean, while every figure on its own scale reads as the annotators gave
it. The references: numpy's means of the values the test stored, and the analysis of the same
answers negated under a higher-is-better criterion (equal up to the sign of those figures)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from annotation.analysis.families.registry import family_of_protocol
from annotation.analysis.qc import criterion_qc
from annotation.analysis.results import QC_FAILED, QC_PASSED, CriterionAnalysis
from annotation.analysis.selectors import campaign_analysis_compute
from annotation.analysis.settings import AnalysisSettings
from annotation.analysis.tables import criterion_table_load
from annotation.protocols import BILINGUAL, PROTOCOLS, Criterion, Protocol, register
from annotation.reports.systems import system_report_latex
from evalcore.human import TOLERANCE_0_TO_100, ItemType, Judgments, annotator_qc, synthetic_scores
from tests.analysis_factories import BuiltCampaign, build_judged_campaign
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

EDIT_RATE = Protocol(
    "toy_edit_rate",
    "Edit rate, 0 to 100",
    (Criterion("edits", "Edits", 0, 100, higher_is_better=False),),
    (BILINGUAL,),
    single_output=True,
)
# The metamorphic twin: the same answers negated, under a criterion where higher is better.
NEGATED_EDIT_RATE = Protocol(
    "toy_negated_edit_rate",
    "Negated edit rate, -100 to 0",
    (Criterion("edits", "Negated edits", -100, 0),),
    (BILINGUAL,),
    single_output=True,
)
SYSTEMS = ["alpha", "bravo", "charlie", "delta"]
# The synthetic campaign of tests/annotation/analysis/test_analysis.py: with this seed the
# careless annotator fails QC, everyone else passes and the systems' order is recovered.
CARELESS = 3
# An annotator whose degraded copies get a better (lower) edit rate than their originals.
TURNED = 5
# The bad-reference test's figures that are the same in both directions.
QC_FIGURES = ("qc_status", "qc_n", "qc_statistic", "qc_p", "qc_mean_difference", "included")
# Figures that do not depend on the direction of the scale.
SAME_FIELDS = (
    "position",
    "cluster",
    "rank_low",
    "rank_high",
    "wins",
    "losses",
    "n_judgments",
    "n_segments",
)


@pytest.fixture
def edit_kinds() -> Iterator[None]:
    register(EDIT_RATE)
    register(NEGATED_EDIT_RATE)
    try:
        yield
    finally:
        del PROTOCOLS[EDIT_RATE.key]
        del PROTOCOLS[NEGATED_EDIT_RATE.key]


def _edit_rates() -> Judgments:
    """Synthetic 0–100 scores turned into edit rates (100 − score): system code 0 is edited
    least, and a degraded copy needs more edits than its original."""
    synthetic = synthetic_scores(
        n_annotators=8,
        n_systems=len(SYSTEMS),
        n_segments=60,
        tasks_per_annotator=2,
        careless=[CARELESS],
        seed=7,
    ).judgments
    return dataclasses.replace(synthetic, score=100.0 - synthetic.score)


def _build(owner: Any, judgments: Judgments, protocol: Protocol, prefix: str) -> BuiltCampaign:
    return build_judged_campaign(
        owner=owner,
        judgments=judgments,
        system_names=SYSTEMS,
        protocol=protocol.key,
        criterion="edits",
        usernames=[f"{prefix}{a:02d}" for a in range(judgments.n_annotators)],
        campaign_name=prefix,
    )


def _only_criterion(built: BuiltCampaign, settings: AnalysisSettings) -> CriterionAnalysis:
    [criterion] = campaign_analysis_compute(campaign=built.campaign, settings=settings).criteria
    return criterion


def _numpy_system_mean(judgments: Judgments, system: int, included: np.ndarray) -> float:
    """The reference: the mean over segments of each segment's mean raw value (REAL and REPEAT
    rows of included annotators), with numpy on the values the test stored."""
    rows = (
        np.isin(judgments.item_type, [ItemType.REAL, ItemType.REPEAT])
        & included[judgments.annotator]
        & (judgments.system == system)
    )
    segment_means = [
        np.mean(judgments.score[rows & (judgments.segment == s)])
        for s in np.unique(judgments.segment[rows])
    ]
    return float(np.mean(segment_means))


def test_an_edit_rate_ranks_the_lowest_mean_first_and_reports_the_rates_as_given(
    owner: Any, edit_kinds: None
) -> None:
    rates = _edit_rates()
    built = _build(owner, rates, EDIT_RATE, "editor")
    criterion = _only_criterion(built, AnalysisSettings())

    # QC: degraded copies scored higher (worse) than their originals, as expected.
    statuses = [a.qc_status for a in criterion.annotators]
    assert statuses[CARELESS] == QC_FAILED
    assert statuses[:CARELESS] + statuses[CARELESS + 1 :] == [QC_PASSED] * 7
    diligent = [a for code, a in enumerate(criterion.annotators) if code != CARELESS]
    assert all(a.included and a.qc_mean_difference > 0 for a in diligent)  # type: ignore[operator]

    # Best first: the lowest edit rate.
    ranked = criterion.ranked_systems
    assert [s.name for s in ranked] == SYSTEMS
    means = [s.mean_raw for s in ranked]
    assert means == sorted(means)  # type: ignore[type-var]
    included = np.arange(rates.n_annotators) != CARELESS
    for code, system in enumerate(ranked):
        assert system.mean_raw == pytest.approx(
            _numpy_system_mean(rates, code, included), rel=1e-12
        )
        # The score (mean z) is in the edit rate's direction too, and inside its intervals.
        assert system.t_low <= system.score <= system.t_high  # type: ignore[operator]
        assert system.boot_low <= system.score <= system.boot_high  # type: ignore[operator]
    z_means = [s.score for s in ranked]
    assert z_means == sorted(z_means)  # type: ignore[type-var]

    # Annotators' means and reference means as they gave them.
    for code, annotator in enumerate(criterion.annotators):
        mine = rates.annotator == code
        basis = mine & np.isin(rates.item_type, [ItemType.REAL, ItemType.REPEAT])
        references = mine & (rates.item_type == ItemType.REFERENCE)
        assert annotator.mean == pytest.approx(np.mean(rates.score[basis]), rel=1e-12)
        assert annotator.references_mean == pytest.approx(
            np.mean(rates.score[references]), rel=1e-12
        )

    # The stored method and the LaTeX caption say which way the scale goes.
    assert criterion.method.lower_is_better is True
    assert criterion.method.to_json()["lower_is_better"] is True
    analysis = campaign_analysis_compute(campaign=built.campaign)
    assert "lower is better; clusters from the one-sided" in system_report_latex(analysis)
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    page = client.get(reverse("campaign_analysis", args=[built.campaign.pk])).content.decode()
    assert '<span class="hint">lower is better</span>' in page
    assert 'title="mean of bad reference − original (positive: scored worse, as expected)"' in page


def test_the_analysis_of_an_edit_rate_is_that_of_its_negated_rates_up_to_sign(
    owner: Any, edit_kinds: None
) -> None:
    rates = _edit_rates()
    settings = AnalysisSettings(resamples=300, seed=5)
    edits = _only_criterion(_build(owner, rates, EDIT_RATE, "editor"), settings)
    negated = _only_criterion(
        _build(owner, rates.negated(), NEGATED_EDIT_RATE, "negator"), settings
    )

    assert [s.name for s in edits.systems] == [s.name for s in negated.systems]
    for mine, twin in zip(edits.systems, negated.systems, strict=True):
        for name in SAME_FIELDS:
            assert getattr(mine, name) == getattr(twin, name), name
        for name in ("score", "mean_raw", "mean_shifted", "mean_z"):
            assert getattr(mine, name) == pytest.approx(-getattr(twin, name), abs=1e-12), name
        # An interval negated back swaps its bounds.
        assert (mine.t_low, mine.t_high) == pytest.approx((-twin.t_high, -twin.t_low), abs=1e-12)  # type: ignore[operator]
        assert (mine.boot_low, mine.boot_high) == pytest.approx(
            (-twin.boot_high, -twin.boot_low),  # type: ignore[operator]
            abs=1e-12,
        )
        assert mine.t_low <= mine.t_high
        assert mine.boot_low <= mine.boot_high

    for mine, twin in zip(edits.annotators, negated.annotators, strict=True):
        for name in (
            *QC_FIGURES,
            "n_rows",
            "repeats_n",
            "repeats_share_within",
            "repeats_pearson",
            "references_n",
            "sd",
            "degenerate",
            "time_seconds",
        ):
            assert getattr(mine, name) == pytest.approx(getattr(twin, name), abs=1e-12), name
        assert mine.mean == pytest.approx(-twin.mean, abs=1e-12)  # type: ignore[operator]
        assert mine.references_mean == pytest.approx(-twin.references_mean, abs=1e-12)  # type: ignore[operator]

    assert edits.significance == negated.significance
    assert [a.value for a in edits.agreement] == pytest.approx(
        [a.value for a in negated.agreement], abs=1e-12
    )
    method = edits.method.to_json()
    assert method.pop("lower_is_better") is True
    assert method == negated.method.to_json()


def test_an_annotator_whose_bad_references_get_a_better_edit_rate_fails_qc(
    owner: Any, edit_kinds: None
) -> None:
    rates = _edit_rates()
    # TURNED's degraded copies get 30 points fewer edits than their originals (at least 0).
    score = rates.score.copy()
    turned = (rates.annotator == TURNED) & (rates.item_type == ItemType.BAD_REF)
    turned &= rates.original >= 0
    original = score[rates.original[turned]]
    score[turned] = np.maximum(original - 30.0, 0.0)
    assert (score[turned] <= original).all()
    assert (score[turned] < original).any()
    built = _build(owner, dataclasses.replace(rates, score=score), EDIT_RATE, "editor")

    table = criterion_table_load(config=built.config, criterion="edits")
    settings = AnalysisSettings()
    qc, _ = family_of_protocol(EDIT_RATE.key).annotator_qc(table, settings)
    assert not qc.passed[TURNED]
    assert qc.bad_reference.p_value[TURNED] > settings.threshold
    verdicts = criterion_qc(table=table, settings=settings, decisions={})
    assert verdicts.statuses[TURNED] == QC_FAILED
    assert verdicts.statuses[0] == QC_PASSED

    # Read as if higher were better, the same answers would pass TURNED and fail the others:
    # the direction is what decides.
    unoriented = annotator_qc(table.judgments, tolerance=TOLERANCE_0_TO_100)
    assert unoriented.passed[TURNED]
    assert not unoriented.passed[0]

    criterion = _only_criterion(built, settings)
    assert criterion.annotators[TURNED].qc_status == QC_FAILED
    assert not criterion.annotators[TURNED].included
