"""The meta-evaluation page and API: who may use them (owner, co-organizer, annotator, another
organizer, anonymous), the table from uploaded .sys.score files equal to the core's, a
malformed file refused with file and line, the CSV download, and the WMT21 Flores release's
files uploaded as they are."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from scipy import stats as sps

from evalcore.metaeval.systems import meta_evaluate_systems
from tests.factories import PASSWORD, make_campaign, make_user
from tests.support.shared_data import shared_data

pytestmark = pytest.mark.django_db

HUMAN = {"A": 0.31, "B": 0.29, "C": 0.25, "D": 0.18, "E": 0.16, "F": -1.25, "ref": 0.5}
BLEU = {"A": 30.1, "B": 28.0, "C": 29.5, "D": 22.0, "E": 21.5, "F": 5.0, "ref": 40.0}
TER = {"A": 50.0, "B": 52.0, "C": 51.0, "D": 60.0, "E": 58.0, "F": 90.0, "ref": 30.0}
STATUS = {"owner": 200, "co_organizer": 200, "annotator": 403, "other": 404, "anonymous": 302}


def score_file(name: str, scores: dict[str, float]) -> SimpleUploadedFile:
    text = "".join(f"{system}\t{value!r}\n" for system, value in scores.items())
    return SimpleUploadedFile(name, text.encode(), content_type="text/plain")


def upload(**extra: object) -> dict[str, object]:
    return {
        "human": score_file("wmt.sys.score", HUMAN),
        "metrics": [score_file("BLEU.sys.score", BLEU), score_file("TER.sys.score", TER)],
        "human_systems": "ref",
        "lower_is_better": "TER",
        "cluster_test": "williams",
        "seed": "7",
        **extra,
    }


@pytest.fixture
def users() -> dict[str, object]:
    owner = make_user("meta-owner", organizer=True)
    co = make_user("meta-co", organizer=True)
    campaign = make_campaign(owner=owner, organizers=[co])
    return {
        "campaign": campaign,
        "owner": owner,
        "co_organizer": co,
        "annotator": make_user("meta-annotator"),
        "other": make_user("meta-other", organizer=True),
    }


def client_as(users: dict[str, object], role: str) -> Client:
    client = Client()
    if role != "anonymous":
        assert client.login(username=users[role].username, password=PASSWORD)  # type: ignore[attr-defined]
    return client


@pytest.mark.parametrize("role", list(STATUS))
def test_only_the_campaigns_organizers_may_meta_evaluate(users, role):
    url = reverse("campaign_meta_evaluation", args=[users["campaign"].pk])
    assert client_as(users, role).get(url).status_code == STATUS[role]
    assert client_as(users, role).post(url, upload()).status_code == STATUS[role]


@pytest.mark.parametrize(
    ("role", "code"),
    [("owner", 200), ("co_organizer", 200), ("annotator", 403), ("other", 404), ("anonymous", 401)],
)
def test_the_api_answers_the_campaigns_organizers_only(users, role, code):
    url = reverse("api-meta-evaluation", args=[users["campaign"].pk])
    assert client_as(users, role).post(url, upload()).status_code == code


def test_the_page_shows_the_cores_table_for_the_uploaded_files(users):
    url = reverse("campaign_meta_evaluation", args=[users["campaign"].pk])
    page = client_as(users, "owner").post(url, upload()).content.decode()
    expected = meta_evaluate_systems(
        human=HUMAN,
        metrics={"BLEU": BLEU, "TER": TER},
        human_systems=["ref"],
        lower_is_better=["TER"],
        rng=7,
    )
    assert 'id="meta-evaluation-table"' in page
    for row in expected.rows:
        assert f"{row.pearson:.3f}" in page
        assert f"{row.tie_accuracy:.3f}" in page
    assert "Human translations left out: ref." in page
    assert "−TER" in page


def test_the_plot_data_are_the_uploaded_scores_negated_as_in_the_table(users):
    url = reverse("campaign_meta_evaluation", args=[users["campaign"].pk])
    page = client_as(users, "owner").post(url, upload(exclude_outliers="on")).content.decode()
    found = re.search(
        r'<script id="meta-evaluation-plot" type="application/json">(.*?)</script>', page
    )
    assert found is not None
    plots = {m["name"]: m for m in json.loads(found.group(1))["metrics"]}
    assert {p["name"]: p["metric"] for p in plots["TER"]["points"]} == {s: -TER[s] for s in "ABCDE"}
    assert {p["name"]: p["human"] for p in plots["BLEU"]["points"]} == {
        s: HUMAN[s] for s in "ABCDE"
    }
    assert [p["name"] for p in plots["BLEU"]["outliers"]] == ["F"]


def test_the_csv_download_is_the_table_at_full_precision(users):
    url = reverse("campaign_meta_evaluation", args=[users["campaign"].pk])
    response = client_as(users, "owner").post(url, upload(download="csv"))
    assert response["Content-Type"].startswith("text/csv")
    assert "meta-evaluation.csv" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    systems = ["A", "B", "C", "D", "E", "F"]
    by_metric = {row["metric"]: row for row in rows}
    assert float(by_metric["BLEU"]["pearson"]) == pytest.approx(
        sps.pearsonr([HUMAN[s] for s in systems], [BLEU[s] for s in systems]).statistic,
        abs=1e-12,
    )
    assert float(by_metric["TER"]["kendall_tau_b"]) == pytest.approx(
        sps.kendalltau([HUMAN[s] for s in systems], [-TER[s] for s in systems]).statistic,
        abs=1e-12,
    )
    assert {row["n_systems"] for row in rows} == {"6"}


def test_a_malformed_file_is_refused_with_its_name_and_line(users):
    url = reverse("campaign_meta_evaluation", args=[users["campaign"].pk])
    broken = SimpleUploadedFile("BLEU.sys.score", b"A\t30.1\nB 28.0\n")
    page = client_as(users, "owner").post(url, upload(metrics=[broken])).content.decode()
    assert "BLEU.sys.score, line 2: expected &#x27;system&lt;TAB&gt;score&#x27;" in page
    assert 'id="meta-evaluation-table"' not in page
    api = reverse("api-meta-evaluation", args=[users["campaign"].pk])
    broken.seek(0)
    response = client_as(users, "owner").post(api, upload(metrics=[broken]))
    assert response.status_code == 400
    assert "BLEU.sys.score, line 2" in response.json()["non_field_errors"][0]


def test_a_metric_missing_a_system_is_refused_by_name(users):
    url = reverse("api-meta-evaluation", args=[users["campaign"].pk])
    partial = {s: v for s, v in BLEU.items() if s != "C"}
    files = [score_file("BLEU.sys.score", partial), score_file("TER.sys.score", TER)]
    response = client_as(users, "owner").post(url, upload(metrics=files))
    assert response.status_code == 400
    assert "metric 'BLEU' has no score for the evaluated system(s) C" in str(response.json())


def test_the_flores_releases_files_give_scipys_correlations_through_the_api(users):
    data = shared_data("wmt21-flores-da")
    if data is None:
        pytest.skip("the WMT21 Flores data is not beside the project (EVALSITE_SHARED_DATA)")
    comet: Path = data / "scores" / "COMET_florestest2021.zu-xh.ref-A.tsv"
    human_rows = (data / "humaneval" / "ad-sys-scores-zu-xh.csv").read_text().splitlines()[1:]
    # The published z-scores as an mt-metrics-eval human file, under WMT's submission names.
    human = {row.split()[3]: float(row.split()[1]) for row in human_rows if row.strip()}
    url = reverse("api-meta-evaluation", args=[users["campaign"].pk])
    body = {
        "human": score_file("wmt-z.sys.score", human),
        "metrics": [SimpleUploadedFile(comet.name, comet.read_bytes())],
        "cluster_test": "williams",
    }
    result = client_as(users, "owner").post(url, body).json()
    assert result["human_only"] == []
    assert result["renamed"]["GTCOM.3"] == "GTCOM"
    comet_scores = {
        line.split("\t")[0]: float(line.split("\t")[1]) for line in comet.read_text().splitlines()
    }
    back = {metric: wmt for wmt, metric in result["renamed"].items()}
    systems = result["systems"]
    h = [human[back[s]] for s in systems]
    row = result["rows"][0]
    assert row["metric"] == "COMET_florestest2021.zu-xh.ref-A"
    assert row["pearson"] == pytest.approx(
        sps.pearsonr(h, [comet_scores[s] for s in systems]).statistic, abs=1e-12
    )
    assert len(systems) == len(human) == 5
