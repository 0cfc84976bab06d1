"""The stored human-analysis result as one typed contract: a real analysis of a score and a
ranking criterion, and the dashboard's human document with its histograms, go to JSON and back
unchanged; a misspelt key, an unknown schema or a newer one is refused by name; a document
stored before the schema key existed reads as schema 1."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, replace
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser

from annotation.analysis.results import (
    SCHEMA_VERSION,
    CampaignAnalysis,
    HumanDocument,
    Method,
    schema_check,
)
from annotation.analysis.selectors import campaign_analysis_compute
from annotation.analysis.settings import AnalysisSettings
from evalcore.human import synthetic_rankings, synthetic_scores
from metrics.human import histograms
from tests.analysis_factories import build_judged_campaign

pytestmark = pytest.mark.django_db

SETTINGS = AnalysisSettings(resamples=50, trueskill_runs=10, seed=5)


@dataclass(frozen=True)
class Computed:
    analysis: CampaignAnalysis
    document: HumanDocument


@pytest.fixture
def computed(owner: AbstractBaseUser) -> Computed:
    """One analysis with a score criterion (a DA campaign) and a ranking criterion (a ranking
    campaign), and the human document of it with the DA campaign's histograms."""
    scores = build_judged_campaign(
        owner=owner,
        judgments=synthetic_scores(
            n_annotators=4, n_systems=3, n_segments=20, tasks_per_annotator=1, seed=7
        ).judgments,
        system_names=["alpha", "bravo", "charlie"],
        campaign_name="Scores",
    )
    rankings = build_judged_campaign(
        owner=owner,
        judgments=synthetic_rankings(
            n_annotators=3, n_systems=5, n_segments=20, screens_per_annotator=20, seed=0
        ).judgments,
        system_names=["s1", "s2", "s3", "s4", "s5"],
        protocol="ranking",
        criterion="rank",
        usernames=["ranker0", "ranker1", "ranker2"],
        campaign_name="Rankings",
    )
    scored = campaign_analysis_compute(campaign=scores.campaign, settings=SETTINGS)
    ranked = campaign_analysis_compute(campaign=rankings.campaign, settings=SETTINGS)
    analysis = replace(scored, criteria=scored.criteria + ranked.criteria)
    assert {c.kind for c in analysis.criteria} == {"scores", "ranking"}
    document = HumanDocument(analysis=analysis, histograms=histograms(campaign=scores.campaign))
    assert document.histograms
    assert document.histograms[0].annotators
    return Computed(analysis=analysis, document=document)


def _stored(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` as the database gives it back: through JSON text."""
    loaded: dict[str, Any] = json.loads(json.dumps(doc))
    return loaded


def test_a_computed_analysis_round_trips_through_json(computed: Computed) -> None:
    analysis = computed.analysis
    doc = analysis.to_json()
    assert doc["schema"] == SCHEMA_VERSION == 2
    read = CampaignAnalysis.from_json(_stored(doc))
    assert read == analysis
    assert read.to_json() == doc
    assert isinstance(read.settings, AnalysisSettings)
    for criterion in read.criteria:
        assert isinstance(criterion.scale, tuple)
    assert [type(a) for a in read.criteria[0].annotators] == [
        type(a) for a in analysis.criteria[0].annotators
    ]


def test_the_human_document_round_trips_through_json(computed: Computed) -> None:
    document = computed.document
    doc = document.to_json()
    assert list(doc) == ["schema", "analysis", "histograms"]
    assert doc["analysis"] == computed.analysis.to_json()
    assert all("pseudonym" not in a for h in doc["histograms"] for a in h["annotators"])
    read = HumanDocument.from_json(_stored(doc))
    assert read == document
    assert read.to_json() == doc
    assert HumanDocument.read(read) is read


@pytest.mark.parametrize(
    ("where", "right", "wrong"),
    [
        ((), "histograms", "histogramms"),
        (("analysis",), "criteria", "criterai"),
        (("analysis", "settings"), "threshold", "treshold"),
        (("analysis", "criteria", 0, "systems", 1), "score", "scroe"),
        (("analysis", "criteria", 1, "annotators", 0), "qc_status", "qc_stat"),
        (("analysis", "criteria", 1, "significance"), "systems", "system"),
        (("histograms", 0, "annotators", 0), "counts", "count"),
        (("analysis", "criteria", 0, "method"), "space", "spcae"),
        (("analysis", "criteria", 1, "method"), "trueskill_runs", "trueskil_bootstrap"),
    ],
)
def test_a_misspelt_key_is_refused_by_name(
    computed: Computed, where: tuple[str | int, ...], right: str, wrong: str
) -> None:
    doc = computed.document.to_json()
    node: Any = doc
    for step in where:
        node = node[step]
    node[wrong] = node.pop(right)
    with pytest.raises(ValueError, match=repr(wrong)):
        HumanDocument.from_json(doc)


def test_a_missing_required_key_is_refused_by_name(computed: Computed) -> None:
    doc = computed.analysis.to_json()
    del doc["criteria"][0]["systems"][0]["name"]
    with pytest.raises(ValueError, match=r"criteria\[0\]\.systems\[0\]: missing key 'name'"):
        CampaignAnalysis.from_json(doc)


@pytest.mark.parametrize("schema", [SCHEMA_VERSION + 1, 99])
def test_a_newer_schema_is_refused(computed: Computed, schema: int) -> None:
    document = computed.document.to_json()
    analysis = copy.deepcopy(document["analysis"])
    document["schema"] = schema
    with pytest.raises(ValueError, match="newer"):
        HumanDocument.from_json(document)
    analysis["schema"] = schema
    with pytest.raises(ValueError, match="newer"):
        CampaignAnalysis.from_json(analysis)
    document = computed.document.to_json()
    document["analysis"]["schema"] = schema
    with pytest.raises(ValueError, match=r"human\.analysis: 'schema'"):
        HumanDocument.from_json(document)


@pytest.mark.parametrize("schema", [0, "1", None, True])
def test_an_unknown_schema_is_refused(schema: Any) -> None:
    with pytest.raises(ValueError, match="schema"):
        schema_check({"schema": schema}, "human")


def test_a_document_without_schema_reads_as_schema_1(computed: Computed) -> None:
    # What the release before the key was added stored.
    doc = computed.document.to_json()
    del doc["schema"]
    del doc["analysis"]["schema"]
    assert schema_check(doc, "human") == 1
    assert schema_check(doc["analysis"], "analysis") == 1
    assert HumanDocument.from_json(doc) == computed.document
    assert CampaignAnalysis.from_json(doc["analysis"]) == computed.analysis


def test_the_method_is_typed_and_keeps_only_what_applies_in_json(computed: Computed) -> None:
    """A score criterion's method names its normalisation and bootstrap, a ranking's its
    TrueSkill runs; in JSON neither carries the other's keys, as stored documents always had."""
    scores, ranking = computed.analysis.criteria[0], computed.analysis.criteria[-1]
    assert isinstance(scores.method, Method)
    assert (scores.method.space, scores.method.resamples, scores.method.seed) == ("z", 50, 5)
    assert scores.method.trueskill_runs is None
    assert (ranking.method.trueskill_runs, ranking.method.significance_test) == (10, "sign")
    score_doc, ranking_doc = scores.method.to_json(), ranking.method.to_json()
    assert "trueskill_runs" not in score_doc
    assert "space" not in ranking_doc
    assert "resamples" not in ranking_doc
    assert list(score_doc)[:2] == ["analysis", "tolerance"]
    assert scores.method.items() == list(score_doc.items())
    assert Method.from_json(_stored(ranking_doc)) == ranking.method


def _schema_1(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` as schema 1 stored it: the old names of the resample counts, the settings'
    seed left to each protocol (None)."""
    old = _stored(doc)
    old["schema"] = old["analysis"]["schema"] = 1
    settings = old["analysis"]["settings"]
    settings["n_bootstrap"] = settings.pop("resamples")
    settings["ranking_bootstrap"] = settings.pop("trueskill_runs")
    settings["seed"] = None
    for criterion in old["analysis"]["criteria"]:
        method = criterion["method"]
        for new, was in (("resamples", "n_bootstrap"), ("trueskill_runs", "trueskill_bootstrap")):
            if new in method:
                method[was] = method.pop(new)
    return old


def test_a_schema_1_document_reads_under_the_new_names(computed: Computed) -> None:
    """Its counts under their new names, its seed the one every criterion ran with."""
    old = _schema_1(computed.document.to_json())
    assert "n_bootstrap" in old["analysis"]["criteria"][0]["method"]
    assert HumanDocument.from_json(old) == computed.document


def test_a_schema_1_document_whose_criteria_ran_with_different_seeds_is_refused(
    computed: Computed,
) -> None:
    old = _schema_1(computed.document.to_json())
    old["analysis"]["criteria"][-1]["method"]["seed"] = 6
    with pytest.raises(ValueError, match=r"human\.analysis\.settings\.seed: each protocol"):
        HumanDocument.from_json(old)


def test_a_document_with_both_names_of_a_count_is_refused(computed: Computed) -> None:
    old = _schema_1(computed.document.to_json())
    old["analysis"]["settings"]["resamples"] = 50
    with pytest.raises(ValueError, match="'n_bootstrap' and 'resamples' are one setting"):
        HumanDocument.from_json(old)
