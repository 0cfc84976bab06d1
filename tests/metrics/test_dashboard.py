"""The campaign dashboard: who may open it (owner, co-organizer, annotator, another organizer,
anonymous), every panel filled from the stored results, live progress against the database,
the stale flag, "recompute now" (queued, reused, broker unreachable), and a query count that does
not grow with the campaign.

The judged campaign is built once for the module (the demo's data, protocols and simulated
raters, judging through the real services; the real pipeline run in this process) inside a
transaction that is rolled back at the end; every test runs in a savepoint inside it.
"""

from __future__ import annotations

import json
import re
import statistics
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from html import unescape
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.judging.screens import annotation_screen
from annotation.judging.services import judgment_record
from annotation.models import (
    AnnotatorPseudonym,
    Campaign,
    Judgment,
    ProtocolConfig,
    System,
    Task,
)
from annotation.tasking.services import task_assign_next
from evalsite.celery import app as celery_app
from metrics.models import AnalysisJob, AnalysisResult
from metrics.queries import IDLE_CAP_SECONDS, campaign_progress
from tests.dashboard_factories import analysis_run_sync, make_judged_demo_campaign
from tests.factories import PASSWORD, full_answer, make_campaign, make_user

pytestmark = pytest.mark.django_db

ROLES = ["owner", "co_organizer", "annotator", "other_organizer", "anonymous"]
STATUS = {
    "owner": 200,
    "co_organizer": 200,
    "annotator": 403,  # not an organizer at all
    "other_organizer": 404,  # an organizer, but not of this campaign: its existence does not leak
    "anonymous": 302,  # to the login page
}
MARKUP_NAME = "<b>rbmt</b>"
# The dashboard's queries: session, user, two permission lookups, the campaign, the metric
# settings and baseline, the fingerprint's four aggregates, the latest job, one per result kind,
# three progress aggregates, document-level scores (one), error spans (five); CSRF needs none.
MAX_QUERIES = 24
# A status poll: the same, and a look for jobs never sent to the workers (sent again).
MAX_STATUS_QUERIES = 19


@dataclass
class Judged:
    campaign: Campaign
    job: AnalysisJob
    users: dict[str, AbstractBaseUser]


@pytest.fixture(scope="module")
def judged(django_db_setup, django_db_blocker) -> Iterator[Judged]:  # type: ignore[no-untyped-def]
    with django_db_blocker.unblock(), transaction.atomic():
        users = {
            "owner": make_user("dash-owner", organizer=True),
            "co_organizer": make_user("dash-coorg", organizer=True),
            "annotator": make_user("dash-annotator"),
            "other_organizer": make_user("dash-outsider", organizer=True),
        }
        campaign = make_judged_demo_campaign(
            owner=users["owner"],
            organizers=[users["co_organizer"]],
            annotators=[users["annotator"]],
            items_per_task=10,
        )
        # A name as an upload may bring it: it must reach every panel as text.
        System.objects.filter(campaign=campaign, name="rbmt-toy").update(name=MARKUP_NAME)
        job = analysis_run_sync(campaign=campaign, user=users["owner"])
        yield Judged(campaign=campaign, job=job, users=users)
        transaction.set_rollback(True)


def client_for(judged: Judged, role: str) -> Client:
    client = Client()
    if role != "anonymous":
        assert client.login(username=judged.users[role].username, password=PASSWORD)
    return client


def urls(campaign: Campaign) -> dict[str, str]:
    return {
        "page": reverse("campaign_dashboard", args=[campaign.pk]),
        "status": reverse("campaign_dashboard_status", args=[campaign.pk]),
        "result": reverse("campaign_dashboard_result", args=[campaign.pk, "metrics"]),
        "recompute": reverse("campaign_dashboard_recompute", args=[campaign.pk]),
    }


def page_html(judged: Judged) -> str:
    response = client_for(judged, "owner").get(urls(judged.campaign)["page"])
    assert response.status_code == 200
    return response.content.decode()


def section(html: str, name: str) -> str:
    match = re.search(rf'<section id="{name}"[^>]*>(.*?)</section>', html, re.S)
    assert match, f"no section {name}"
    return match.group(1)


def json_block(html: str, element_id: str) -> dict:
    match = re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>', html)
    assert match, element_id
    return json.loads(match.group(1))


def texts(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", " ", html))


# --------------------------------------------------------------------------------------------
# Permissions


@pytest.mark.parametrize("url", ["page", "status", "result"])
@pytest.mark.parametrize("role", ROLES)
def test_dashboard_urls_answer_only_the_owner_and_co_organizers(judged, role, url) -> None:  # type: ignore[no-untyped-def]
    response = client_for(judged, role).get(urls(judged.campaign)[url])
    assert response.status_code == STATUS[role]
    if role == "anonymous":
        assert response["Location"].startswith(reverse("login"))
    if STATUS[role] != 200:
        assert judged.campaign.name.encode() not in response.content


@pytest.mark.parametrize("role", ROLES)
def test_only_organizers_of_the_campaign_can_ask_for_a_recomputation(judged, role) -> None:  # type: ignore[no-untyped-def]
    before = AnalysisJob.objects.count()
    response = client_for(judged, role).post(urls(judged.campaign)["recompute"])
    allowed = STATUS[role] == 200
    assert response.status_code == (302 if allowed else STATUS[role])
    if allowed:
        assert response["Location"] == urls(judged.campaign)["page"]
    assert AnalysisJob.objects.count() == before + (1 if allowed else 0)


def test_the_recompute_button_only_accepts_post(judged) -> None:  # type: ignore[no-untyped-def]
    response = client_for(judged, "owner").get(urls(judged.campaign)["recompute"])
    assert response.status_code == 405


def test_the_campaign_page_links_to_the_dashboard(judged) -> None:  # type: ignore[no-untyped-def]
    response = client_for(judged, "owner").get(judged.campaign.get_absolute_url())
    assert f'href="{urls(judged.campaign)["page"]}"' in response.content.decode()


# --------------------------------------------------------------------------------------------
# Panels


def _check_job_progress_and_qc(html: str, campaign: Campaign, human: dict[str, Any]) -> None:
    # Job: done, 100 %, up to date.
    job = section(html, "job")
    assert "Done" in job
    assert 'value="100"' in job
    assert re.search(r'id="stale-flag"[^>]*hidden', job)
    assert not re.search(r'id="fresh-flag"[^>]*hidden', job)

    # Progress: one row per protocol, one per rater.
    progress = texts(section(html, "progress"))
    for config in ProtocolConfig.objects.filter(campaign=campaign):
        assert config.name in progress
    for rater in ("rater-a", "rater-b", "rater-c", "rater-careless"):
        assert rater in progress

    # QC: every annotator of every criterion, with the QC verdict the analysis stored.
    qc = section(html, "qc")
    for criterion in human["analysis"]["criteria"]:
        assert criterion["config_name"] in texts(qc)
    careless = next(
        a
        for a in human["analysis"]["criteria"][0]["annotators"]
        if a["username"] == "rater-careless"
    )
    assert careless["qc_status"] == "failed"
    assert "qc-failed" in qc
    assert "qc-passed" in qc


def _check_rankings_and_metric_tables(
    html: str, human: dict[str, Any], metrics: dict[str, Any]
) -> None:
    # Human rankings: every ranked system, positions and clusters, the interval bars.
    ranking = section(html, "human")
    assert ranking.count("<table") == len(human["analysis"]["criteria"])
    first = human["analysis"]["criteria"][0]
    best = first["systems"][0]
    assert best["position"] == 1
    assert best["name"] in texts(ranking)
    assert f"[{best['t_low']:.3f}, {best['t_high']:.3f}]" in ranking
    ranked = [s for c in human["analysis"]["criteria"] for s in c["systems"] if s["position"]]
    assert ranking.count('class="ci-dot"') == len(ranked) >= 12

    # Metric tables: BLEU, chrF, TER; every system with its runs and CIs; p against the baseline.
    panel = section(html, "metrics")
    for doc in metrics["metrics"]:
        table = re.search(rf'id="metric-{doc["key"]}">(.*?)</table>', panel, re.S).group(1)
        assert table.count("<tr") == 1 + len(doc["systems"])
        for system in doc["systems"]:
            assert f"{system['mean']:.2f}" in table
            for run in system["runs"]:
                assert f"[{run['ci_low']:.2f}, {run['ci_high']:.2f}]" in table
        assert doc["signature"] in unescape(panel)
    assert metrics["baseline"]["name"] in texts(panel)

    # MultEval: mean (s_sel/s_opt/p), systems have three runs.
    multeval = section(html, "multeval")
    bleu = next(d for d in metrics["metrics"] if d["key"] == "bleu")
    row = next(s for s in bleu["systems"] if s["p_baseline"] is not None)
    assert f'{row["mean"]:.2f} <span class="hint">({row["s_sel"]:.2f}/{row["s_opt"]:.2f}/' in (
        multeval
    )


def _check_correlations_and_plots(
    html: str, human: dict[str, Any], correlations: dict[str, Any]
) -> None:
    # Correlations: one table per human criterion, one row per metric, with intervals.
    panel = section(html, "correlations")
    assert panel.count('class="data correlation-table"') == len(correlations["criteria"])
    adequacy = correlations["criteria"][0]
    pearson = adequacy["metrics"][0]["system"]["pearson"]
    assert f"{pearson['value']:.3f}" in panel
    assert "−TER" in texts(panel)
    assert "Williams test" in panel

    # Plot data: histograms, heatmaps and scatter plots with every system.
    plots = json_block(html, "dashboard-plots")
    assert len(plots["histograms"]) == len(human["histograms"]) == 4  # not ranks, not MQM
    assert {len(h["annotators"]) for h in plots["histograms"]} == {4}
    assert [h["key"] for h in plots["heatmaps"]] == ["bleu", "chrf", "ter"]
    assert all(len(h["systems"]) == 4 for h in plots["heatmaps"])
    with_systems = [c for c in correlations["criteria"] if c["metrics"][0].get("system")]
    assert len(plots["scatter"]) == len(with_systems) >= 3
    assert all(len(m["points"]) == 4 for s in plots["scatter"] for m in s["metrics"])
    assert 'data-plot="histogram"' in html
    assert 'data-plot="heatmap"' in html
    assert 'id="scatter-grid"' in html


def _check_downloads(html: str, judged: Judged) -> None:
    # Downloads: every report and the stored documents.
    downloads = section(html, "downloads")
    campaign = judged.campaign
    for name, args in [
        ("campaign_report_judgments", ["csv"]),
        ("campaign_report_judgments", ["tsv"]),
        ("campaign_report_judgments", ["jsonl"]),
        ("campaign_report_systems", ["csv"]),
        ("campaign_report_systems", ["json"]),
        ("campaign_report_systems", ["tex"]),
        ("campaign_report_annotators", []),
        ("campaign_dashboard_result", ["metrics"]),
        ("campaign_dashboard_result", ["human"]),
        ("campaign_dashboard_result", ["correlations"]),
    ]:
        assert f'href="{reverse(name, args=[campaign.pk, *args])}"' in downloads
    segments = reverse("api-segment-scores", args=[campaign.pk])
    for metric in AnalysisResult.objects.get(job=judged.job, kind="metrics").data["metrics"]:
        assert f'href="{segments}?metric={metric["key"]}&amp;output=csv"' in downloads
    assert "/static/plotly/plotly.min.js" in html


def test_every_panel_shows_the_stored_results(judged) -> None:  # type: ignore[no-untyped-def]
    html = page_html(judged)
    results = {r.kind: r.data for r in AnalysisResult.objects.filter(job=judged.job)}
    metrics, human, correlations = results["metrics"], results["human"], results["correlations"]
    _check_job_progress_and_qc(html, judged.campaign, human)
    _check_rankings_and_metric_tables(html, human, metrics)
    _check_correlations_and_plots(html, human, correlations)
    _check_downloads(html, judged)


def test_the_heatmap_says_which_system_wins_each_pair(judged) -> None:  # type: ignore[no-untyped-def]
    plots = json_block(page_html(judged), "dashboard-plots")
    doc = AnalysisResult.objects.get(job=judged.job, kind="metrics").data
    names = {s["id"]: s["name"] for s in doc["systems"]}
    for heatmap, metric in zip(plots["heatmaps"], doc["metrics"], strict=True):
        pairwise = metric["pairwise"]
        index = {names[i]: k for k, i in enumerate(pairwise["systems"])}
        means = {s["name"]: s["mean"] for s in metric["systems"]}
        sign = 1 if metric["higher_is_better"] else -1
        # Best first.
        assert heatmap["systems"] == sorted(means, key=lambda n: -sign * means[n])
        for i, a in enumerate(heatmap["systems"]):
            for j, b in enumerate(heatmap["systems"]):
                if i == j:
                    assert heatmap["outcome"][i][j] == 0
                    continue
                p = pairwise["bootstrap_p"][index[a]][index[b]]
                assert heatmap["bootstrap_p"][i][j] == pytest.approx(p, rel=1e-3)
                # The document stores score(column) − score(row) on the pooled runs.
                delta = -pairwise["delta"][index[a]][index[b]]
                assert heatmap["delta"][i][j] == pytest.approx(delta, rel=1e-3)
                expected = 0 if p >= 0.05 else (1 if sign * delta > 0 else -1)
                assert heatmap["outcome"][i][j] == expected


def test_uploaded_names_reach_the_page_as_text(judged) -> None:  # type: ignore[no-untyped-def]
    html = page_html(judged)
    assert MARKUP_NAME not in html
    assert "&lt;b&gt;rbmt&lt;/b&gt;" in section(html, "metrics")
    assert "&lt;b&gt;rbmt&lt;/b&gt;" in section(html, "human")
    # json_script escapes markup; the plots get the name as data.
    assert "\\u003Cb\\u003Erbmt" in html
    assert MARKUP_NAME in json_block(html, "dashboard-plots")["heatmaps"][0]["systems"]


def test_numbers_follow_the_language_but_bar_positions_stay_machine_numbers(judged) -> None:  # type: ignore[no-untyped-def]
    client = client_for(judged, "owner")
    client.cookies["django_language"] = "de"
    html = client.get(urls(judged.campaign)["page"]).content.decode()
    doc = AnalysisResult.objects.get(job=judged.job, kind="metrics").data
    bleu = next(d for d in doc["metrics"] if d["key"] == "bleu")
    assert f"{bleu['systems'][0]['mean']:.2f}".replace(".", ",") in section(html, "metrics")
    shapes = re.findall(r'<(rect|circle) class="ci-\w+" (c?x="[^"]*"(?: width="[^"]*")?)', html)
    assert {shape for shape, _ in shapes} == {"rect", "circle"}
    assert all(re.fullmatch(r'c?x="-?[\d.]+%"( width="[\d.]+%")?', place) for _, place in shapes)


def test_a_campaign_without_results_says_so(judged) -> None:  # type: ignore[no-untyped-def]
    empty = make_campaign(owner=judged.users["owner"], name="Fresh", with_data=True)
    html = client_for(judged, "owner").get(urls(empty)["page"]).content.decode()
    assert "No analysis yet" in html
    assert "No stored results yet" in html
    assert "No stored metric results yet." in section(html, "metrics")
    assert json_block(html, "dashboard-plots") == {"heatmaps": [], "histograms": [], "scatter": []}


def test_a_stored_result_downloads_as_json_with_its_provenance(judged) -> None:  # type: ignore[no-untyped-def]
    response = client_for(judged, "owner").get(urls(judged.campaign)["result"])
    assert response["Content-Disposition"] == 'attachment; filename="demo-like-de-en-metrics.json"'
    body = json.loads(response.content)
    stored = AnalysisResult.objects.get(job=judged.job, kind="metrics")
    assert body["data"] == stored.data
    assert body["fingerprint"] == stored.fingerprint
    assert body["data"]["params"]["seed"] == 12345
    unknown = reverse("campaign_dashboard_result", args=[judged.campaign.pk, "nothing"])
    assert client_for(judged, "owner").get(unknown).status_code == 404


@pytest.mark.parametrize("api", [False, True])
def test_the_stored_human_document_names_annotators_by_pseudonym_unless_asked(judged, api) -> None:  # type: ignore[no-untyped-def]
    # As every report does: a file shared from the dashboard must not carry usernames unless
    # the organizer asked for them.
    campaign = judged.campaign
    url = (
        reverse("api-analysis-result", args=[campaign.pk, "human"])
        if api
        else reverse("campaign_dashboard_result", args=[campaign.pk, "human"])
    )
    client = client_for(judged, "owner")
    stored = AnalysisResult.objects.get(job=judged.job, kind="human").data
    usernames = {a["username"] for c in stored["analysis"]["criteria"] for a in c["annotators"]} | {
        a["username"] for h in stored["histograms"] for a in h["annotators"]
    }
    assert usernames  # the stored document has them, for the dashboard page

    data = client.get(url).json()["data"]
    body = json.dumps(data)
    assert not any(f'"{name}"' in body for name in usernames)
    pseudonyms = AnnotatorPseudonym.objects.filter(campaign=campaign)
    codes = {p.annotator_id: p.code for p in pseudonyms}
    for annotators, key in [
        *((c["annotators"], "annotator_id") for c in data["analysis"]["criteria"]),
        *((h["annotators"], "id") for h in data["histograms"]),
    ]:
        assert annotators
        for annotator in annotators:
            assert "username" not in annotator
            assert annotator["pseudonym"] == codes[annotator[key]]
    # Everything but the names is the stored document.
    assert [c["systems"] for c in data["analysis"]["criteria"]] == [
        c["systems"] for c in stored["analysis"]["criteria"]
    ]
    assert [[a["counts"] for a in h["annotators"]] for h in data["histograms"]] == [
        [a["counts"] for a in h["annotators"]] for h in stored["histograms"]
    ]

    real = client.get(url, {"names": "real"}).json()["data"]
    assert {a["username"] for h in real["histograms"] for a in h["annotators"]} <= usernames
    assert all(a["username"] for c in real["analysis"]["criteria"] for a in c["annotators"])
    if api:
        refused = client.get(url, {"names": "everyone"})
        assert refused.status_code == 400
        assert "names" in refused.json()


# --------------------------------------------------------------------------------------------
# Live progress and staleness


def test_progress_counts_come_from_the_judgments_and_tasks(judged) -> None:  # type: ignore[no-untyped-def]
    campaign = judged.campaign
    progress = campaign_progress(campaign=campaign)
    for config in progress.configs:
        tasks = Task.objects.filter(config_id=config.config_id)
        judgments = Judgment.objects.filter(item__task__config_id=config.config_id)
        seconds = [s for s in judgments.values_list("seconds", flat=True) if s is not None]
        assert config.needed == sum(t.size * t.annotations_needed for t in tasks)
        assert config.judged == judgments.count() > 0
        assert config.remaining == config.needed - config.judged
        assert config.seconds == pytest.approx(sum(min(s, IDLE_CAP_SECONDS) for s in seconds))
        assert config.median_seconds == pytest.approx(statistics.median(seconds))
        assert config.remaining_seconds == pytest.approx(
            config.remaining * statistics.median(seconds)
        )
    assert progress.judged == Judgment.objects.filter(item__task__config__campaign=campaign).count()
    by_user = {a.username: a for a in progress.annotators}
    assert set(by_user) == {"rater-a", "rater-b", "rater-c", "rater-careless"}
    for username, row in by_user.items():
        mine = Judgment.objects.filter(
            item__task__config__campaign=campaign, annotator__username=username
        )
        assert row.judged == mine.count() == sum(row.per_config)
        assert row.last_submitted == max(j.submitted_at for j in mine)


def test_idle_gaps_count_at_most_five_minutes(judged) -> None:  # type: ignore[no-untyped-def]
    campaign = judged.campaign
    config = ProtocolConfig.objects.filter(campaign=campaign).order_by("created").first()
    before = next(
        c for c in campaign_progress(campaign=campaign).configs if c.config_id == config.pk
    )
    judgment = Judgment.objects.filter(item__task__config=config, seconds__isnull=False).first()
    old = judgment.seconds
    Judgment.objects.filter(pk=judgment.pk).update(seconds=3 * 3600)  # a lunch break
    after = next(
        c for c in campaign_progress(campaign=campaign).configs if c.config_id == config.pk
    )
    assert after.seconds == pytest.approx(before.seconds - old + IDLE_CAP_SECONDS)


def test_a_new_judgment_marks_the_results_stale_and_shows_on_the_progress(judged) -> None:  # type: ignore[no-untyped-def]
    client = client_for(judged, "owner")
    status = client.get(urls(judged.campaign)["status"]).json()
    assert status["stale"] is False
    assert status["has_results"] is True
    assert status["results_job_id"] == str(judged.job.pk)
    assert status["job"]["status"] == "done"
    assert status["job"]["percent"] == 100

    annotator = judged.users["annotator"]
    config = ProtocolConfig.objects.get(campaign=judged.campaign, protocol="direct_assessment")
    assignment = task_assign_next(config=config, annotator=annotator)
    screen = annotation_screen(assignment_id=assignment.pk, annotator=annotator)
    judgment_record(
        assignment_id=assignment.pk,
        annotator=annotator,
        item_id=screen.item.pk,
        revision_seen=0,
        submission_id=uuid.uuid4(),
        answer=full_answer(screen.item, 70),
    )

    after = client.get(urls(judged.campaign)["status"]).json()
    assert after["stale"] is True
    assert after["progress"]["judged"] == status["progress"]["judged"] + 1
    assert after["progress"]["remaining"] == status["progress"]["remaining"] - 1
    html = page_html(judged)
    assert not re.search(r'id="stale-flag"[^>]*hidden', html)
    assert annotator.username in texts(section(html, "progress"))


def test_changing_the_analysis_settings_also_marks_the_results_stale(judged) -> None:  # type: ignore[no-untyped-def]
    settings = judged.campaign.metric_settings
    settings.ar_trials = 77
    settings.save()
    status = client_for(judged, "owner").get(urls(judged.campaign)["status"]).json()
    assert status["stale"] is True


# --------------------------------------------------------------------------------------------
# Recompute now


def messages_of(response) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(m) for m in response.context["messages"]]


def test_recompute_now_queues_a_job_then_reuses_it(judged, redis_url) -> None:  # type: ignore[no-untyped-def]
    client = client_for(judged, "owner")
    first = client.post(urls(judged.campaign)["recompute"], follow=True)
    assert messages_of(first) == [
        "Recomputation queued. The numbers below update when it has finished."
    ]
    job = AnalysisJob.objects.filter(campaign=judged.campaign).order_by("-created").first()
    assert job.pk != judged.job.pk
    assert (job.status, job.dispatched, job.requested_by) == ("queued", True, judged.users["owner"])
    assert job.fingerprint == judged.job.fingerprint  # same data, forced anyway

    second = client.post(urls(judged.campaign)["recompute"], follow=True)
    assert messages_of(second) == [
        "An analysis of exactly this data is already queued; no second one was started."
    ]
    assert AnalysisJob.objects.filter(campaign=judged.campaign).count() == 2

    status = client.get(urls(judged.campaign)["status"]).json()
    assert status["job"]["id"] == str(job.pk)
    assert status["job"]["status"] == "queued"
    assert status["results_job_id"] == str(judged.job.pk)  # the old results stay on show
    html = second.content.decode()
    assert re.search(r'<span class="badge job-queued" id="job-status">Queued</span>', html)


def test_a_running_job_is_reused_and_the_page_says_so(judged) -> None:  # type: ignore[no-untyped-def]
    AnalysisJob.objects.filter(pk=judged.job.pk).update(status="running", stage="statistics")
    response = client_for(judged, "owner").post(urls(judged.campaign)["recompute"], follow=True)
    assert messages_of(response) == [
        "An analysis of exactly this data is already running; no second one was started."
    ]


def point_celery_at(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    # Celery reads CELERY_BROKER_URL from the environment before its configuration.
    monkeypatch.setenv("CELERY_BROKER_URL", url)
    monkeypatch.setattr(celery_app.amqp, "_producer_pool", None)


@pytest.fixture
def broker_down(monkeypatch: pytest.MonkeyPatch, redis_url: str) -> Iterator[None]:
    """The Celery app pointed at a port where nothing listens (a broker that is down)."""
    point_celery_at(monkeypatch, "redis://127.0.0.1:1/0")
    yield
    point_celery_at(monkeypatch, redis_url)


def test_recompute_when_the_queue_is_down_is_saved_and_sent_when_it_is_back(
    judged, redis_url, broker_down, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    client = client_for(judged, "owner")
    response = client.post(urls(judged.campaign)["recompute"], follow=True)
    assert messages_of(response) == [
        "The task queue cannot be reached right now. Your request is saved and will start when "
        "the queue is back."
    ]
    job = AnalysisJob.objects.filter(campaign=judged.campaign).order_by("-created").first()
    assert (job.status, job.dispatched) == ("queued", False)
    assert "queue is back" in response.content.decode()

    point_celery_at(monkeypatch, redis_url)  # the queue is back: the next poll sends the job
    status = client.get(urls(judged.campaign)["status"]).json()
    assert status["job"]["id"] == str(job.pk)
    assert status["job"]["dispatched"] is True
    job.refresh_from_db()
    assert job.dispatched


# --------------------------------------------------------------------------------------------
# Queries


def count_queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def test_the_dashboard_query_count_is_pinned(judged, django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    client = client_for(judged, "owner")
    client.get(urls(judged.campaign)["page"])  # warm: metric settings exist
    with django_assert_max_num_queries(MAX_QUERIES):
        assert client.get(urls(judged.campaign)["page"]).status_code == 200


def test_the_query_count_does_not_grow_with_the_campaign(judged) -> None:  # type: ignore[no-untyped-def]
    client = client_for(judged, "owner")
    small = make_campaign(owner=judged.users["owner"], name="Small", with_data=True)
    for campaign in (small, judged.campaign):
        client.get(urls(campaign)["page"])  # warm
    small_count = count_queries(client, urls(small)["page"])
    big_count = count_queries(client, urls(judged.campaign)["page"])
    assert small_count == big_count <= MAX_QUERIES
    # With stored results too: still the same.
    analysis_run_sync(campaign=small)
    assert count_queries(client, urls(small)["page"]) == big_count
    status_small = count_queries(client, urls(small)["status"])
    assert status_small == count_queries(client, urls(judged.campaign)["status"])
    assert status_small <= MAX_STATUS_QUERIES
