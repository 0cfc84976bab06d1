"""Segment-level meta-evaluation on the page and the API: mt-metrics-eval's .seg.score files
uploaded (alone or beside system-level ones) give scipy's correlations under each grouping, the
human translations left out, an error metric negated; the segment CSV at full precision; files
that cannot be aligned refused by name."""

from __future__ import annotations

import csv
import io
import math

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from scipy import stats as sps

from evalcore.stats.ties import tie_calibrated_accuracy
from tests.factories import PASSWORD, make_campaign, make_user

pytestmark = pytest.mark.django_db

SYSTEMS = ["A", "B", "C", "D", "E"]
SEGMENTS = 30


def scores() -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, list[float]]]:
    """Human segment scores (two cells unscored) of five systems and a reference, a metric
    that follows them with noise and an error metric (lower is better)."""
    rng = np.random.default_rng(20261207)
    human = {
        s: [float(v) for v in rng.normal(70 - 5 * i, 15, SEGMENTS).round(1)]
        for i, s in enumerate(SYSTEMS)
    }
    human["ref"] = [float(v) for v in rng.normal(90, 5, SEGMENTS).round(1)]
    human["B"][3] = math.nan
    human["E"][17] = math.nan
    metric = {s: [v + float(rng.normal(0, 10)) for v in values] for s, values in human.items()}
    metric = {s: [0.0 if math.isnan(v) else v for v in values] for s, values in metric.items()}
    errors = {s: [100 - v for v in values] for s, values in metric.items()}
    return human, metric, errors


def seg_file(name: str, values: dict[str, list[float]]) -> SimpleUploadedFile:
    lines = [
        f"{system}\t{'None' if math.isnan(v) else repr(v)}\n"
        for system, column in values.items()
        for v in column
    ]
    return SimpleUploadedFile(name, "".join(lines).encode(), content_type="text/plain")


def matrices(values: dict[str, list[float]]) -> np.ndarray:
    return np.array([values[s] for s in SYSTEMS], dtype=np.float64)


@pytest.fixture
def campaign_owner() -> tuple[object, Client]:
    owner = make_user("seg-owner", organizer=True)
    campaign = make_campaign(owner=owner)
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    return campaign, client


def upload(**extra: object) -> dict[str, object]:
    human, metric, errors = scores()
    return {
        "human_segments": seg_file("wmt.seg.score", human),
        "metric_segments": [seg_file("COMET.seg.score", metric), seg_file("TER.seg.score", errors)],
        "human_systems": "ref",
        "lower_is_better": "TER",
        "cluster_test": "williams",
        **extra,
    }


def test_segment_files_alone_give_scipys_correlations_under_each_grouping(campaign_owner):
    campaign, client = campaign_owner
    url = reverse("api-meta-evaluation", args=[campaign.pk])
    response = client.post(url, upload())
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["rows"] == []  # no system-level files, no system-level table
    segments = body["segments"]
    assert segments["systems"] == SYSTEMS
    assert segments["excluded_human"] == ["ref"]
    assert segments["n_segments"] == SEGMENTS
    assert segments["n_cells"] == len(SYSTEMS) * SEGMENTS - 2
    human, metric, _ = scores()
    h, m = matrices(human), matrices(metric)
    rows = {(r["metric"], r["average_by"]): r for r in segments["rows"]}
    present = ~np.isnan(h)
    assert rows["COMET", "none"]["pearson"] == pytest.approx(
        sps.pearsonr(h[present], m[present]).statistic, abs=1e-12
    )
    assert rows["COMET", "none"]["kendall"] == pytest.approx(
        sps.kendalltau(h[present], m[present]).statistic, abs=1e-12
    )
    by_item = [
        sps.pearsonr(h[present[:, j], j], m[present[:, j], j]).statistic for j in range(SEGMENTS)
    ]
    assert rows["COMET", "item"]["pearson"] == pytest.approx(np.mean(by_item), abs=1e-12)
    by_system = [sps.spearmanr(h[i][present[i]], m[i][present[i]]).statistic for i in range(5)]
    assert rows["COMET", "sys"]["spearman"] == pytest.approx(np.mean(by_system), abs=1e-12)
    assert rows["COMET", "item"]["acc_eq"] == pytest.approx(
        tie_calibrated_accuracy(h.T, m.T).accuracy, abs=1e-12
    )
    assert rows["COMET", "none"]["acc_eq"] is None
    # The two metrics order every scored cell alike: Δ r is 0 up to rounding, so the
    # permutation test finds nothing; Williams is undefined (their correlation is 1): null.
    (test,) = segments["tests"]
    assert test["delta"] == pytest.approx(0, abs=1e-12)
    assert test["permutation_p"] > 0.5
    assert test["williams_p"] is None
    assert (segments["cluster_test"], segments["n_trials"]) == ("permutation", 1000)
    # The error metric is negated: 100 − COMET agrees exactly as COMET does.
    assert segments["negated"] == ["TER"]
    assert rows["TER", "none"]["pearson"] == pytest.approx(rows["COMET", "none"]["pearson"])


def test_the_page_shows_both_tables_and_the_segment_csv_is_at_full_precision(campaign_owner):
    campaign, client = campaign_owner
    url = reverse("campaign_meta_evaluation", args=[campaign.pk])
    system_files = {
        "human": SimpleUploadedFile("wmt.sys.score", b"A\t70\nB\t65\nC\t60\nD\t55\nE\t50\n"),
        "metrics": [SimpleUploadedFile("BLEU.sys.score", b"A\t30\nB\t29\nC\t25\nD\t26\nE\t20\n")],
    }
    page = client.post(url, upload(**system_files)).content.decode()
    assert 'id="meta-evaluation-table"' in page
    assert 'id="meta-evaluation-segment-table"' in page
    assert "5 systems, 30 segments, 148 scored by the humans." in page
    assert "by item (segment)" in page
    assert "one-sided Williams test" in page
    human, metric, _ = scores()
    h, m = matrices(human), matrices(metric)
    present = ~np.isnan(h)
    expected = sps.pearsonr(h[present], m[present]).statistic
    assert f"{expected:.3f}" in page
    response = client.post(url, upload(download="segment-csv"))
    assert "meta-evaluation-segments.csv" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 2 * 3
    comet = next(r for r in rows if r["metric"] == "COMET" and r["grouping"] == "none")
    assert float(comet["pearson"]) == pytest.approx(expected, abs=1e-12)
    assert comet["tie_calibrated_accuracy"] == ""
    assert (comet["n_systems"], comet["n_segments"], comet["n_cells"]) == ("5", "30", "148")
    # COMET and TER (negated) order every cell alike: one cluster.
    assert [r["cluster"] for r in rows if r["grouping"] == "none"] == ["1", "1"]
    assert {r["cluster"] for r in rows if r["grouping"] != "none"} == {""}
    assert 'id="meta-evaluation-segment-tests"' in page
    assert "one-sided paired permutation test, 1000 trials" in page


def test_segment_files_that_cannot_be_aligned_are_refused_by_name(campaign_owner):
    campaign, client = campaign_owner
    url = reverse("api-meta-evaluation", args=[campaign.pk])
    _, metric, _ = scores()
    short = {s: values[:-1] for s, values in metric.items()}
    response = client.post(
        url, upload(metric_segments=[seg_file("COMET.seg.score", short)], lower_is_better="")
    )
    assert response.status_code == 400
    assert "metric 'COMET' has 29 segments per system, the humans 30" in str(response.json())
    gap = {s: list(values) for s, values in metric.items()}
    gap["C"][4] = math.nan
    response = client.post(
        url, upload(metric_segments=[seg_file("COMET.seg.score", gap)], lower_is_better="")
    )
    assert response.status_code == 400
    assert "no score for system 'C', segment 5" in str(response.json())
    no_human = upload()
    del no_human["human_segments"]
    response = client.post(url, no_human)
    assert response.status_code == 400
    assert "Upload the human segment scores." in str(response.json())
    nothing = {"cluster_test": "williams"}
    response = client.post(url, nothing)
    assert response.status_code == 400
    assert "system-level files, segment-level files or both" in str(response.json())
