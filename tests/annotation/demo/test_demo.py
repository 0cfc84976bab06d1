"""`manage.py load_demo`: the demo campaign, its accounts, idempotence, and systems whose quality
differs clearly (checked with sacreBLEU, not with our own scorer)."""

from __future__ import annotations

import itertools
from io import StringIO

import pytest
import sacrebleu
from django.contrib.auth import authenticate
from django.core.management import call_command

from annotation.campaigns.selectors import campaign_counts
from annotation.demo.campaign import DEMO_ANNOTATORS, DEMO_ORGANIZER, DEMO_PASSWORD, DEMO_SYSTEMS
from annotation.models import Campaign, Reference, Translation
from annotation.permissions import user_is_organizer

pytestmark = pytest.mark.django_db


def test_load_demo_creates_the_campaign_and_accounts_once() -> None:
    first, second = StringIO(), StringIO()
    call_command("load_demo", stdout=first)
    call_command("load_demo", stdout=second)
    assert "Created" in first.getvalue()
    assert "Already present" in second.getvalue()
    assert f"{DEMO_ORGANIZER} / {DEMO_PASSWORD}" in second.getvalue()
    campaign = Campaign.objects.get()
    counts = campaign_counts(campaign=campaign)
    assert (counts.documents, counts.segments, counts.reference_sets) == (6, 60, 2)
    assert (counts.systems, counts.runs, counts.translations) == (4, 12, 720)
    organizer = authenticate(username=DEMO_ORGANIZER, password=DEMO_PASSWORD)
    assert organizer is not None
    assert user_is_organizer(organizer)
    for name in DEMO_ANNOTATORS:
        annotator = authenticate(username=name, password=DEMO_PASSWORD)
        assert annotator is not None
        assert not user_is_organizer(annotator)
        assert campaign.annotators.filter(pk=annotator.pk).exists()


def test_the_demo_systems_differ_clearly_in_quality_in_every_run() -> None:
    call_command("load_demo", stdout=StringIO())
    campaign = Campaign.objects.get()
    refs = [
        list(
            Reference.objects.filter(segment__campaign=campaign, index=i)
            .order_by("segment__position")
            .values_list("text", flat=True)
        )
        for i in (0, 1)
    ]
    scores: dict[str, list[float]] = {}
    for system in DEMO_SYSTEMS:
        for run in ("run1", "run2", "run3"):
            hyps = list(
                Translation.objects.filter(
                    run__system__campaign=campaign, run__system__name=system, run__name=run
                )
                .order_by("segment__position")
                .values_list("text", flat=True)
            )
            scores.setdefault(system, []).append(sacrebleu.corpus_bleu(hyps, refs).score)
    ordered = list(DEMO_SYSTEMS)  # best to worst
    for better, worse in itertools.pairwise(ordered):
        assert min(scores[better]) > max(scores[worse]) + 5, (better, worse, scores)
    # Runs of one system differ a little, as optimizer replicas do.
    assert len(set(scores["nmt-base"])) == 3


def test_the_demo_raters_judged_through_the_services_and_the_careless_one_fails_qc() -> None:
    from annotation.analysis.selectors import campaign_analysis_compute
    from annotation.models import Judgment

    call_command("load_demo", stdout=StringIO())
    campaign = Campaign.objects.get()
    assert Judgment.objects.filter(item__task__config__campaign=campaign).count() > 400
    analysis = campaign_analysis_compute(campaign=campaign)
    for criterion in analysis.criteria:
        if criterion.kind != "scores":
            continue
        status = {a.username: a.qc_status for a in criterion.annotators}
        assert status["rater-careless"] == "failed", criterion.criterion
        assert {status[n] for n in ("rater-a", "rater-b", "rater-c")} == {"passed"}
        best = criterion.ranked_systems[0]
        assert best.name == "nmt-large"
    # The document-screen protocol's window scores: the careless rater is left out (as in its
    # segment-level analysis) and the best system comes first.
    from annotation.analysis.documents import campaign_document_scores
    from annotation.analysis.settings import AnalysisSettings

    (documents,) = campaign_document_scores(campaign=campaign, settings=AnalysisSettings())
    assert documents.n_annotators == 4
    assert documents.n_included == 3
    assert [s.name for s in documents.systems] == list(DEMO_SYSTEMS)
