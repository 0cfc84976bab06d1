"""WMT21's Flores DA published as standardised scores only (``ad-<pair>-good-stnd.csv``: each
worker's scores as z-scores, the same columns as ad-good-raw.csv) imported onto the pair's XML
test set: ``auto`` takes them as standardised, the analysis uses them as given, and every
system's z mean is the release's published Z.SCR (ad-sys-scores-<pair>.csv) — the mean over
segments of the segment means, as the release's README says; every system has one judgment per
segment here, so the mean over judgments is the same number. A request for raw scores is
answered in z, saying so, with no raw means; nothing is standardised again.

The data is read from shared/data/wmt21-flores-da/ (tests/support/wmt21_flores.py)."""

from __future__ import annotations

import gzip
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from annotation.analysis.selectors import campaign_analysis_compute
from annotation.analysis.settings import AnalysisSettings
from annotation.campaigns.uploads import UploadError, UploadFile
from annotation.judgment_import.background import judgment_import_state
from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.services import judgments_import
from annotation.models import JudgmentImport
from annotation.reports.judgments import JUDGMENT_COLUMNS
from annotation.reports.stream import judgment_report_stream
from metrics.human import histograms
from tests.factories import PASSWORD, imports_run_queued, make_user
from tests.support.wmt21_flores import (
    FLORES,
    MISSING,
    flores_campaign,
    published_system_ids,
    published_system_scores,
)

pytestmark = pytest.mark.django_db

if FLORES is None:
    pytest.skip(MISSING, allow_module_level=True)

PAIRS = ["zu-xh", "xh-zu", "hi-bn", "bn-hi"]


def _stnd_name(pair: str) -> str:
    return f"ad-{pair.replace('-', '')}-good-stnd.csv"


def _stnd(pair: str) -> UploadFile:
    assert FLORES is not None
    name = _stnd_name(pair)
    return UploadFile(name, (FLORES / "humaneval" / name).read_bytes())


def _raw_file() -> bytes:
    assert FLORES is not None
    return (FLORES / "humaneval" / "ad-good-raw.csv.gz").read_bytes()


def _options(pair: str, scores: str = "auto") -> ImportOptions:
    return ImportOptions(file_format="wmt", system_map=published_system_ids(pair), scores=scores)


# Few resamples: the figures checked here do not depend on them.
SETTINGS = AnalysisSettings(resamples=10)


@pytest.fixture
def owner() -> Any:
    return make_user("stnd-importer", organizer=True)


@pytest.mark.parametrize("pair", PAIRS)
def test_each_system_z_mean_is_the_published_z_score(owner: Any, pair: str) -> None:
    campaign = flores_campaign(pair, owner)
    record = judgments_import(
        campaign=campaign, upload=_stnd(pair), user=None, options=_options(pair)
    )
    assert (record.options["scores"], record.summary["scores"]) == ("auto", "standardised")
    assert record.config.scores_standardised
    [criterion] = campaign_analysis_compute(campaign=campaign, settings=SETTINGS).criteria
    assert (criterion.method.space, criterion.method.scores) == ("z", "standardised")
    published = published_system_scores(pair)
    ours = {s.name: s for s in criterion.systems}
    assert ours.keys() == published.keys()
    for name, (_, z, n) in published.items():
        system = ours[name]
        assert system.n_judgments == system.n_segments == n
        assert system.score == pytest.approx(z, abs=1e-9)
        assert system.mean_z == pytest.approx(z, abs=1e-9)
        assert (system.mean_raw, system.mean_shifted) == (None, None)
    assert all(a.mean is None and a.sd is None for a in criterion.annotators)


@pytest.fixture
def zu_xh(owner: Any) -> Any:
    campaign = flores_campaign("zu-xh", owner)
    judgments_import(
        campaign=campaign,
        upload=_stnd("zu-xh"),
        user=None,
        options=_options("zu-xh", "standardised"),
    )
    return campaign


def test_a_raw_space_request_is_answered_in_z_and_says_why(zu_xh: Any, owner: Any) -> None:
    client = Client()
    assert client.login(username=owner.get_username(), password=PASSWORD)
    query = {"space": "raw", "qc_space": "raw", "resamples": 10}
    data = client.get(
        reverse("api-campaign-analysis", args=[zu_xh.pk]), query, HTTP_ACCEPT="application/json"
    ).json()
    [criterion] = data["criteria"]
    assert data["settings"]["space"] == "raw"
    method = criterion["method"]
    assert (method["space"], method["qc_space"], method["scores"]) == ("z", "z", "standardised")
    published = published_system_scores("zu-xh")
    for system in criterion["systems"]:
        assert system["mean_raw"] is None
        assert system["mean_shifted"] is None
        # Not standardised again: each worker's z-scores here have a mean of 0 and an SD of 1
        # to 1e-7, and standardising them again moves a system's mean by up to 1.3e-7.
        assert system["score"] == pytest.approx(published[system["name"]][1], abs=1e-9)
    page = client.get(reverse("campaign_analysis", args=[zu_xh.pk]), query)
    assert page.status_code == 200
    assert "the raw scores are not in the release" in page.content.decode()


@pytest.mark.parametrize("python_text", [False, True])
def test_the_judgment_report_gives_the_scores_as_z_and_no_raw_score(
    zu_xh: Any, python_text: bool
) -> None:
    report = b"".join(
        judgment_report_stream(campaign=zu_xh, file_format="tsv", python_text=python_text)
    )
    lines = report.decode().splitlines()
    rows = [dict(zip(JUDGMENT_COLUMNS, line.split("\t"), strict=True)) for line in lines[1:]]
    given = [line.split("\t")[10] for line in _stnd("zu-xh").content.decode().splitlines()[1:]]
    assert len(rows) == len(given) == 2502
    assert {r["raw"] for r in rows} == {""}
    assert {r["shifted"] for r in rows} == {""}
    assert sorted(float(r["z"]) for r in rows) == sorted(float(v) for v in given)


def test_the_raw_score_histograms_leave_standardised_scores_out(zu_xh: Any, owner: Any) -> None:
    assert histograms(campaign=zu_xh) == []
    # Beside them, the raw file's scores of the same judgments have their histogram.
    judgments_import(
        campaign=zu_xh,
        upload=UploadFile("ad-good-raw.csv", gzip.decompress(_raw_file())),
        user=None,
        options=ImportOptions(
            file_format="wmt", language_pair="zu-xh", system_map=published_system_ids("zu-xh")
        ),
    )
    [histogram] = histograms(campaign=zu_xh)
    assert sum(sum(a.counts) for a in histogram.annotators) == 2502
    # The judgment report: raw scores for the raw file's rows only.
    report = b"".join(judgment_report_stream(campaign=zu_xh, file_format="tsv"))
    lines = report.decode().splitlines()[1:]
    rows = [dict(zip(JUDGMENT_COLUMNS, line.split("\t"), strict=True)) for line in lines]
    raw = [r["raw"] for r in rows if r["protocol"] == "Imported: ad-good-raw.csv"]
    assert len(raw) == 2502
    assert all(value.isdigit() for value in raw)
    assert {r["raw"] for r in rows if r["protocol"] == "Imported: ad-zuxh-good-stnd.csv"} == {""}


def test_raw_scores_refuse_the_file_naming_its_first_row(zu_xh: Any) -> None:
    campaign = zu_xh
    with pytest.raises(UploadError) as refused:
        judgments_import(
            campaign=campaign, upload=_stnd("zu-xh"), user=None, options=_options("zu-xh", "raw")
        )
    first = refused.value.problems[0]
    assert (first.file, first.line) == ("ad-zuxh-good-stnd.csv", 2)
    assert "score -1.45712 is outside the score scale 0–100" in first.message
    assert "import it with scores=standardised" in first.message


def test_the_page_api_and_command_take_the_scores_option(owner: Any, tmp_path: Path) -> None:
    campaign = flores_campaign("zu-xh", owner)
    client = Client()
    assert client.login(username=owner.get_username(), password=PASSWORD)
    system_map = "\n".join(f"{k} = {v}" for k, v in published_system_ids("zu-xh").items())
    fields = {"file_format": "wmt", "protocol": "direct_assessment", "line_base": "1"}
    content = _stnd("zu-xh").content
    posted = client.post(
        reverse("campaign_judgment_import", args=[campaign.pk]),
        {
            **fields,
            "system_map": system_map,
            "scores": "standardised",
            "file": SimpleUploadedFile(_stnd_name("zu-xh"), content),
        },
    )
    assert posted.status_code == 302
    [job] = imports_run_queued()
    assert job.status == "done", job.problems
    assert job.result.options["scores"] == "standardised"
    message = judgment_import_state(job)["message"]
    assert "Scores imported as standardised (z-scores)" in message
    assert job.result.config.scores_standardised

    api = reverse("api-campaign-judgment-imports", args=[campaign.pk])
    body = {"scores": "raw", "dry_run": "true", "system_map": system_map}
    refused = client.post(api, {**body, "file": SimpleUploadedFile("a.csv", content)})
    assert refused.status_code == 400
    assert "import it with scores=standardised" in str(refused.json())

    assert FLORES is not None
    path = FLORES / "humaneval" / _stnd_name("zu-xh")
    with pytest.raises(CommandError, match="outside the score scale"):
        call_command("import_judgments", str(campaign.pk), str(path), "--scores", "raw")
    out = StringIO()
    map_file = tmp_path / "systems.txt"
    map_file.write_text(system_map)
    call_command(
        "import_judgments",
        str(campaign.pk),
        str(path),
        "--scores",
        "standardised",
        "--name",
        "from the command",
        "--system-map",
        str(map_file),
        stdout=out,
    )
    assert JudgmentImport.objects.get(config__name="from the command").config.scores_standardised
    assert "the release holds no raw scores" in out.getvalue()
