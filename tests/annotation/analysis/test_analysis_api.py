"""The analysis API and settings page: who may use them, what they answer, and the settings
the next analysis takes."""

from __future__ import annotations

import pytest
from django.urls import reverse

from metrics import pipeline
from metrics.models import AnalysisJob, AnalysisResult
from tests.dashboard_factories import campaign_resampling_set

pytestmark = pytest.mark.django_db

ROLES = ["owner", "co_organizer", "annotator", "other_organizer", "anonymous"]


def run_pipeline(campaign) -> AnalysisJob:  # type: ignore[no-untyped-def]
    ms = pipeline.metric_settings(campaign.pk)
    ms.metrics, ms.ar_trials = ["bleu", "chrf"], 100
    ms.save()
    campaign_resampling_set(campaign, resamples=50)
    params = pipeline.analysis_params(campaign=campaign)
    job = AnalysisJob.objects.create(
        campaign=campaign,
        fingerprint=pipeline.campaign_fingerprint(campaign=campaign, params=params),
        params=params,
        status=AnalysisJob.Status.RUNNING,
    )
    for chunk in pipeline.plan(campaign=campaign, params=params):
        pipeline.chunk_compute(job=job, start=chunk.start, stop=chunk.stop)
    pipeline.finalize(job)
    AnalysisJob.objects.filter(pk=job.pk).update(status=AnalysisJob.Status.DONE)
    return job


STATUS = {
    "owner": 200,
    "co_organizer": 200,
    "annotator": 403,
    "other_organizer": 404,
    "anonymous": 401,
}


@pytest.mark.parametrize("role", ROLES)
def test_only_the_campaigns_organizers_see_its_analysis(as_role, campaign, role, redis_url) -> None:  # type: ignore[no-untyped-def]
    run_pipeline(campaign)
    client = as_role(role)
    status = client.get(reverse("api-analysis", args=[campaign.pk])).status_code
    result = client.get(reverse("api-analysis-result", args=[campaign.pk, "metrics"])).status_code
    segments = client.get(
        reverse("api-segment-scores", args=[campaign.pk]), {"metric": "bleu"}
    ).status_code
    assert status == STATUS[role]
    assert result == STATUS[role]
    assert segments == STATUS[role]
    page = client.get(reverse("analysis_settings", args=[campaign.pk])).status_code
    assert page == {"annotator": 403, "other_organizer": 404, "anonymous": 302}.get(role, 200)


def test_results_are_served_once_an_analysis_finished(as_role, campaign) -> None:  # type: ignore[no-untyped-def]
    client = as_role("owner")
    url = reverse("api-analysis-result", args=[campaign.pk, "metrics"])
    assert client.get(url).status_code == 404
    job = run_pipeline(campaign)
    body = client.get(url).json()
    assert body["job"] == str(job.pk)
    assert [m["key"] for m in body["data"]["metrics"]] == ["bleu", "chrf"]
    assert (
        client.get(reverse("api-analysis-result", args=[campaign.pk, "nonsense"])).status_code
        == 404
    )
    assert AnalysisResult.objects.filter(job=job).count() == 3


def test_recompute_now_queues_a_job_and_a_second_click_reuses_it(
    as_role, campaign, redis_url
) -> None:  # type: ignore[no-untyped-def]
    client = as_role("owner")
    url = reverse("api-analysis", args=[campaign.pk])
    assert client.get(url).status_code == 204
    first = client.post(url).json()
    assert first["queued"] is True
    assert first["reused"] is False
    assert first["detail"] == "The analysis is queued."
    second = client.post(url).json()
    assert second["reused"] is True
    assert second["job"]["id"] == first["job"]["id"]
    assert "already under way" in second["detail"]
    assert client.get(url).json()["status"] == "queued"


def test_unchanged_inputs_reuse_a_finished_analysis_and_new_judgments_do_not(
    as_role, campaign
) -> None:  # type: ignore[no-untyped-def]
    from metrics.services import analysis_request

    job = run_pipeline(campaign)
    assert analysis_request(campaign=campaign).job.pk == job.pk
    campaign_resampling_set(campaign, seed=99)
    assert analysis_request(campaign=campaign).job.pk != job.pk


def test_the_settings_page_saves_the_baseline_and_refuses_silly_numbers(as_role, campaign) -> None:  # type: ignore[no-untyped-def]
    client = as_role("owner")
    url = reverse("analysis_settings", args=[campaign.pk])
    good = campaign.systems.get(name="good")
    response = client.post(
        url,
        {
            "metrics": ["bleu", "ter"],
            "baseline": good.pk,
            "tokenize": "intl",
            "resamples": 500,
            "ar_trials": 2000,
            "seed": 7,
        },
    )
    assert response.status_code == 302
    ms = pipeline.metric_settings(campaign.pk)
    assert (ms.metrics, ms.baseline, ms.tokenize) == (["bleu", "ter"], good, "intl")
    campaign.refresh_from_db()
    assert (campaign.analysis_settings["resamples"], campaign.analysis_settings["seed"]) == (500, 7)
    assert pipeline.analysis_params(campaign=campaign)["baseline"] == good.pk
    bad = client.post(
        url,
        {
            "metrics": ["bleu"],
            "tokenize": "13a",
            "resamples": 1,
            "ar_trials": 100,
            "seed": 1,
        },
    )
    assert bad.status_code == 400
    assert "between 10 and 100,000" in bad.content.decode()


def test_segment_scores_are_stored_and_served_as_sacrebleus_sentence_scores(
    as_role, campaign
) -> None:  # type: ignore[no-untyped-def]
    import csv
    import io

    import sacrebleu

    from tests.factories import REF_A, REF_B, SYSTEMS

    client = as_role("owner")
    run_pipeline(campaign)
    url = reverse("api-segment-scores", args=[campaign.pk])
    body = client.get(url, {"metric": "bleu"}).json()
    assert [s["seg_id"] for s in body["segments"]] == ["1", "2", "1", "2"]
    assert len(body["runs"]) == 4
    for run in body["runs"]:
        hyps = SYSTEMS[(run["system"], run["run"])]
        expected = [
            sacrebleu.sentence_bleu(h, [a, b]).score
            for h, a, b in zip(hyps, REF_A, REF_B, strict=True)
        ]
        assert run["scores"] == pytest.approx(expected, abs=1e-9)
    response = client.get(url, {"metric": "chrf", "output": "csv"})
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0] == ["position", "doc_id", "seg_id", "system", "run", "metric", "score"]
    assert len(rows) == 1 + 4 * 4
    first = rows[1]
    hyp = SYSTEMS[(first[3], first[4])][int(first[0])]
    assert float(first[6]) == pytest.approx(
        sacrebleu.sentence_chrf(hyp, [REF_A[0], REF_B[0]]).score, abs=1e-9
    )
    unknown = client.get(url, {"metric": "nonsense"})
    assert unknown.status_code == 400
    assert "bleu, chrf" in unknown.json()["detail"]
