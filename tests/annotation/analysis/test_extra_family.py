"""An analysis family registered by the test suite alone runs through the whole product: a kind
that names it is built and judged, the analysis computes its criterion with it, and the system
and annotator reports, the analysis page, the background analysis (correlations included) and
the dashboard show it. No module of EvalSite names it: a new family is one object behind the
families' interface (``annotation.analysis.families.base.AnalysisFamily``) and one entry in
``FAMILIES``."""

from __future__ import annotations

import csv
import io
import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from django.template import Template
from django.test import Client
from django.urls import reverse

from annotation.analysis.families.base import AnalysisFamily, CriterionQC, HumanSide
from annotation.analysis.families.registry import FAMILIES
from annotation.analysis.results import (
    AnnotatorResult,
    CriterionAnalysis,
    Method,
    SignificanceMatrix,
    SystemResult,
    annotator_common_fields,
)
from annotation.analysis.selectors import campaign_analysis_compute
from annotation.analysis.settings import AnalysisSettings
from annotation.analysis.tables import (
    CriterionTable,
    Names,
    repeat_tolerance,
    system_codes,
    system_name,
)
from annotation.models import ItemKind, ItemOutput, Judgment
from annotation.protocols import PROTOCOLS, SOURCE_BASED, Criterion, Protocol, register
from annotation.reports.annotators import annotator_report_csv
from annotation.reports.systems import system_report_csv
from evalcore.human import ItemType, Normalised, annotator_qc, segment_scores
from metrics.models import AnalysisResult
from tests.dashboard_factories import analysis_run_sync
from tests.factories import PASSWORD, make_config, make_rich_campaign, make_user

# The family's page parts: compiled here, included by the analysis page and the dashboard
# with ``part`` set (the scores family's files show every part there is).
PARTS = Template(
    '{% if part == "method" %}Toy means of raw scores.'
    '{% elif part == "systems_head" %}<th class="num toy-head">Toy mean</th>'
    '{% elif part == "system_cells" %}<td class="num toy-mean">{{ s.score }}</td>'
    '{% elif part == "qc_delta_head" %}<th class="num">Δ</th>'
    '{% elif part == "qc_repeats_head" %}Toy repeats'
    '{% elif part == "qc_reference_head" %}<th class="num">Ref.</th>{% endif %}'
)


class MeanFamily(AnalysisFamily):
    """Each system's mean raw score over the REAL judgments of included annotators, ranked by
    it; QC by the core's bad-reference test on raw scores, as any scored kind."""

    key = "toy_mean"
    result_kind = "toy_mean"
    analysis_template = PARTS
    dashboard_template = PARTS

    def annotator_qc(
        self, table: CriterionTable, settings: AnalysisSettings
    ) -> tuple[Any, Normalised | None]:
        qc = annotator_qc(
            table.judgments,
            tolerance=repeat_tolerance(table.definition),
            test=settings.qc_test,
            space="raw",
            threshold=settings.threshold,
            basis=settings.basis,
            idle_cap=settings.idle_cap,
        )
        return qc, None

    def analyse(
        self,
        table: CriterionTable,
        settings: AnalysisSettings,
        names: Names,
        verdicts: CriterionQC,
    ) -> CriterionAnalysis:
        j = table.judgments
        return CriterionAnalysis(
            config_id=table.config.pk,
            config_name=table.config.name,
            protocol=table.config.protocol,
            criterion=table.criterion,
            criterion_label=str(table.definition.label),
            kind=self.result_kind,
            scale=(table.definition.minimum, table.definition.maximum),
            n_rows=len(j),
            n_annotators=j.n_annotators,
            n_segments=j.n_segments,
            annotators=_annotators(table, names, verdicts),
            systems=_mean_systems(table, names, verdicts),
            agreement=[],
            significance=SignificanceMatrix(
                test="none", alpha=settings.alpha, systems=[], p=[], n=[]
            ),
            method=Method(
                analysis="mean raw score per system",
                qc_test=settings.qc_test,
                qc_space="raw",
                threshold=settings.threshold,
                idle_cap=settings.idle_cap,
                include_failed=settings.include_failed,
                exclude_untested=settings.exclude_untested,
                significance_test="none",
                alpha=settings.alpha,
                confidence=settings.confidence,
                seed=settings.seed,
                version="toy",
            ),
        )

    def human_side(
        self,
        table: CriterionTable,
        criterion: CriterionAnalysis,
        include: np.ndarray,
        segment_position: np.ndarray,
        chosen_codes: np.ndarray,
        n_segments: int,
    ) -> HumanSide:
        """``[segment mean of raw scores, 1]`` per chosen system and segment."""
        j = table.judgments
        rows = (j.item_type == ItemType.REAL) & include[j.annotator]
        raw = j.score.astype(np.float64)
        scores = segment_scores(j, raw, rows)
        human = np.zeros((len(chosen_codes), n_segments, 2))
        known = segment_position >= 0
        mean = scores.mean[np.maximum(chosen_codes, 0)][:, known]
        mean[chosen_codes < 0] = np.nan
        present = np.isfinite(mean)
        human[:, segment_position[known], 0] = np.where(present, mean, 0.0)
        human[:, segment_position[known], 1] = present
        return HumanSide(human=human, human_fn=None, rows=rows, z=raw)

    def human_score(self, criterion: CriterionAnalysis) -> str:
        return "toy mean"

    def score_space(self, criterion: CriterionAnalysis) -> str:
        return "raw"


def _mean_systems(table: CriterionTable, names: Names, verdicts: CriterionQC) -> list[SystemResult]:
    """The systems ranked by their mean raw score over the REAL rows of included annotators."""
    j = table.judgments
    real = (j.item_type == ItemType.REAL) & verdicts.included[j.annotator]
    n = table.system_ids.shape[0]
    total = np.bincount(j.system[real], weights=j.score[real], minlength=n)
    count = np.bincount(j.system[real], minlength=n)
    means = {c: float(total[c] / count[c]) for c in system_codes(table) if count[c]}
    order = sorted(means, key=lambda c: -means[c])
    return [
        SystemResult(
            system_id=int(table.system_ids[c]),
            name=system_name(table, c, names),
            position=rank,
            cluster=rank,
            rank_low=rank,
            rank_high=rank,
            wins=0,
            losses=0,
            n_judgments=int(count[c]),
            n_segments=len(np.unique(j.segment[real & (j.system == c)])),
            score=means[c],
            mean_raw=means[c],
            mean_shifted=None,
            mean_z=None,
            t_low=None,
            t_high=None,
            boot_low=None,
            boot_high=None,
        )
        for rank, c in enumerate(order, start=1)
    ]


def _annotators(
    table: CriterionTable, names: Names, verdicts: CriterionQC
) -> list[AnnotatorResult]:
    """Who the annotators are and their QC; the family keeps no other annotator statistics."""
    j = table.judgments
    rows = np.bincount(j.annotator, minlength=j.n_annotators)
    bad = verdicts.qc.bad_reference
    return [
        AnnotatorResult(
            **annotator_common_fields(
                names, a, code, int(rows[code]), verdicts.statuses[code], bad, verdicts.included
            ),
            repeats_n=0,
            repeats_share_within=None,
            repeats_pearson=None,
            references_n=0,
            references_mean=None,
            time_seconds=0.0,
            n_screens=0,
            n_unknown_time=0,
            n_capped=0,
            mean=None,
            sd=None,
            degenerate=False,
        )
        for code, a in enumerate(table.annotator_ids.tolist())
    ]


TOY_KIND = Protocol(
    "toy_means",
    "Quality for the toy family, 1 to 7",
    (Criterion("quality", "Toy quality", 1, 7, {1: "Useless", 7: "Perfect"}),),
    (SOURCE_BASED,),
    single_output=True,
    analysis="toy_mean",
)
# What the annotators give each system's outputs; QC copies well below their originals.
SYSTEM_SCORE = {"nmt-large": 7, "nmt-base": 5, "smt-phrase": 3, "rbmt-toy": 1}


@pytest.fixture
def mean_family() -> Iterator[AnalysisFamily]:
    family = MeanFamily()
    FAMILIES.append(family)
    register(TOY_KIND)
    try:
        yield family
    finally:
        del PROTOCOLS[TOY_KIND.key]
        FAMILIES.remove(family)


def _value(output: ItemOutput) -> int:
    if output.kind == ItemKind.BAD_REFERENCE:
        assert output.original is not None
        return max(1, _value(output.original) - 3 - output.pk % 2)
    if output.kind == ItemKind.REFERENCE:
        return 7
    assert output.translation is not None
    return SYSTEM_SCORE[output.translation.run.system.name]


def _annotate(client: Client, config_id: int, tasks: int) -> None:
    """Take ``tasks`` tasks through the API and answer every item of each."""
    for _ in range(tasks):
        taken = client.post(reverse("api-config-take", args=[config_id]))
        assert taken.status_code == 200
        assignment = taken.json()["id"]
        while (
            current := client.get(reverse("api-assignment-current", args=[assignment]))
        ).status_code != 410:
            body = current.json()
            outputs = ItemOutput.objects.select_related("translation__run__system").filter(
                pk__in=[o["id"] for o in body["outputs"]]
            )
            sent = client.post(
                reverse("api-assignment-submit", args=[assignment]),
                {
                    "item": body["item"],
                    "revision": 0,
                    "submission_id": str(uuid.uuid4()),
                    "answer": {str(o.pk): {"quality": _value(o)} for o in outputs},
                },
                content_type="application/json",
            )
            assert sent.status_code == 201, sent.content


@pytest.mark.django_db
def test_a_family_registered_by_a_test_runs_from_analysis_to_dashboard(
    mean_family: AnalysisFamily,
) -> None:
    owner = make_user("family-owner", organizer=True)
    campaign = make_rich_campaign(owner=owner)
    annotators = [make_user(f"family-rater{n}") for n in range(3)]
    campaign.annotators.add(*annotators)
    config = make_config(
        campaign,
        TOY_KIND.key,
        items_per_task=12,
        outputs_per_screen=1,
        annotations_per_task=3,
        qc_bad_reference=25,
    )
    for annotator in annotators:
        client = Client()
        assert client.login(username=annotator.username, password=PASSWORD)
        _annotate(client, config.pk, tasks=2)
    assert Judgment.objects.filter(item__task__config=config).count() == 72

    # Analysis: the family's criterion, systems ranked by their mean raw score.
    analysis = campaign_analysis_compute(campaign=campaign)
    [criterion] = analysis.criteria
    assert criterion.kind == "toy_mean"
    assert [(a.qc_status, a.qc_n) for a in criterion.annotators] == [("passed", 6)] * 3
    assert [(s.name, s.score) for s in criterion.ranked_systems] == [
        ("nmt-large", 7.0),
        ("nmt-base", 5.0),
        ("smt-phrase", 3.0),
        ("rbmt-toy", 1.0),
    ]

    # Reports: the family's columns in the system report, the annotators in theirs.
    systems = list(csv.DictReader(io.StringIO(system_report_csv(analysis))))
    assert [(r["system"], r["score"], r["space"]) for r in systems] == [
        ("nmt-large", "7", "raw"),
        ("nmt-base", "5", "raw"),
        ("smt-phrase", "3", "raw"),
        ("rbmt-toy", "1", "raw"),
    ]
    rows = list(csv.DictReader(io.StringIO(annotator_report_csv(analysis, {}))))
    assert [r["qc_status"] for r in rows] == ["passed"] * 3

    # The analysis page: the family's parts.
    organizer = Client()
    assert organizer.login(username=owner.username, password=PASSWORD)
    page = organizer.get(reverse("campaign_analysis", args=[campaign.pk])).content.decode()
    assert "Toy means of raw scores." in page
    assert page.count('<td class="num toy-mean">') == 4

    # The background analysis (metrics and their correlations with the family's human score)
    # and the dashboard.
    job = analysis_run_sync(campaign=campaign, user=owner)
    correlations = AnalysisResult.objects.get(job=job, kind="correlations").data
    [human] = correlations["criteria"]
    assert human["human_score"] == "toy mean"
    dashboard = organizer.get(reverse("campaign_dashboard", args=[campaign.pk])).content.decode()
    assert dashboard.count("Toy means of raw scores.") == 1
    assert dashboard.count('<th class="num toy-head">Toy mean</th>') == 1
    assert dashboard.count("Toy repeats") == 1
