"""A campaign built in one step from a Google MQM TSV release (``campaign_from_release`` and
``import_judgments --create-campaign``).

The release (tests/support/google_mqm_release.py, in the layout of Google's TED release, with
gaps in seg_id, two talks, ``ref-A`` and ``Human-B``) is read back from the campaign and compared
with the file; the MQM scores are worked out here by hand with Google's weights."""

from __future__ import annotations

import io
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.analysis.selectors import campaign_analysis_compute
from annotation.analysis.settings import AnalysisSettings
from annotation.campaigns.systems import system_name_is_human
from annotation.campaigns.uploads import UploadError, UploadFile
from annotation.judgment_import.formats import judgment_file_text
from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.release import campaign_from_release
from annotation.judgment_import.services import judgments_import
from annotation.models import (
    Campaign,
    Document,
    JudgmentSpan,
    JudgmentValue,
    Segment,
    System,
    Translation,
)
from annotation.reports.spans import mqm_tsv
from tests.factories import PASSWORD, make_user
from tests.support.google_mqm_release import (
    ERRORS,
    HEADER,
    SEGMENTS,
    SOURCES,
    TARGETS,
    release_rows,
    tsv,
)

pytestmark = pytest.mark.django_db

# Google's weights by hand (major 5, minor 1, minor punctuation 0.1), per judgment; Facebook-AI's
# first segment is judged by two raters, the other outputs by one.
BY_HAND = {
    "Facebook-AI": (0 + 0 + 0 + 5 + 0) / 5,
    "Online-W": (1 + 5 + 0 + (1 + 5)) / 4,
    "ref-A": (0 + 0 + 1 + 0) / 4,
    "Human-B": (0 + 0.1 + 0 + 0) / 4,
}


@pytest.fixture
def owner() -> Any:
    return make_user("release-owner", organizer=True)


def test_the_campaign_holds_the_files_documents_segments_and_outputs(owner: Any) -> None:
    record = campaign_from_release(owner=owner, name="TED en-de", files=[tsv()])
    campaign = record.campaign
    assert campaign.owner == owner
    # Google's TSV names no languages: undetermined, to be set on the campaign's page.
    assert (campaign.source_language, campaign.target_language) == ("und", "und")
    assert list(
        Document.objects.filter(campaign=campaign).values_list("external_id", "position")
    ) == [
        ("talk.1", 0),
        ("talk.7", 1),
    ]
    segments = list(
        Segment.objects.filter(campaign=campaign)
        .order_by("position")
        .values_list("document__external_id", "external_id", "position_in_document", "source")
    )
    assert segments == [(d, s, i, SOURCES[(d, s)]) for d, s, i in [
        ("talk.1", "1", 0), ("talk.1", "2", 1), ("talk.7", "41", 0), ("talk.7", "43", 1)
    ]]  # fmt: skip
    held = {
        (t.run.system.name, t.segment.document.external_id, t.segment.external_id): t.text
        for t in Translation.objects.filter(run__system__campaign=campaign).select_related(
            "run__system", "segment__document"
        )
    }
    assert held == {
        (system, doc, seg): targets[i]
        for system, targets in TARGETS.items()
        for i, (doc, seg) in enumerate(SEGMENTS)
    }
    assert dict(System.objects.filter(campaign=campaign).values_list("name", "human")) == {
        "Facebook-AI": False,
        "Online-W": False,
        "ref-A": True,
        "Human-B": True,
    }


def test_the_judgments_read_back_give_the_files_spans_and_mqm(owner: Any) -> None:
    campaign = campaign_from_release(owner=owner, name="TED en-de", files=[tsv()]).campaign
    scores: dict[str, list[float]] = defaultdict(list)
    for system, value in JudgmentValue.objects.filter(
        judgment__item__task__config__campaign=campaign, criterion="mqm"
    ).values_list("output__system__name", "value"):
        scores[system].append(-value)
    assert {s: sum(v) / len(v) for s, v in scores.items()} == pytest.approx(BY_HAND)
    spans = {
        (s.output.system.name, s.judgment.item.segment.external_id, s.start, s.end)
        for s in JudgmentSpan.objects.select_related("output__system", "judgment__item__segment")
    }
    expected = set()
    for (system, seg), errors in ERRORS.items():
        text = TARGETS[system][[s for _, s in SEGMENTS].index(seg)]
        for _source, marked, _category, _severity in errors:
            if marked is None:  # marked in the source: the missing-content marker
                expected.add((system, seg, len(text), len(text) + 1))
            else:
                start = marked.index("<v>")
                expected.add((system, seg, start, marked.index("</v>") - len("<v>")))
    assert spans == expected


def test_a_later_file_of_the_release_is_read_by_googles_seg_ids(owner: Any) -> None:
    campaign = campaign_from_release(owner=owner, name="TED en-de", files=[tsv()]).campaign
    # The rows of talk.7 only: seg_id 43 is no line of the campaign's four segments.
    later = [r for r in release_rows() if r[1] == "talk.7"]
    record = judgments_import(campaign=campaign, upload=tsv(later), user=None)
    assert record.summary["judgments"] == 8
    judged = set(
        JudgmentValue.objects.filter(judgment__item__task__config=record.config).values_list(
            "judgment__item__segment__external_id", flat=True
        )
    )
    assert judged == {"41", "43"}


def test_a_refused_release_leaves_no_campaign(owner: Any) -> None:
    rows = release_rows()
    # Online-W's output of seg 1 as a second rater's row gives it otherwise.
    line = 2 + len(rows)
    changed = ("Online-W", "talk.1", "1", "1", "rater3", SOURCES[("talk.1", "1")])
    rows.append((*changed, "Ich möchte euch bitten.", "No-error", "No-error", ""))
    with pytest.raises(UploadError) as refused:
        campaign_from_release(owner=owner, name="TED en-de", files=[tsv(rows)])
    [problem] = refused.value.problems
    assert problem.line == line
    assert "Online-W's output differs" in problem.message
    # Refused after the campaign and its texts were written: a system the campaign lacks.
    options = ImportOptions(system_map={"Online-W": "Online-X"})
    with pytest.raises(UploadError, match="Online-X"):
        campaign_from_release(owner=owner, name="TED en-de", files=[tsv()], options=options)
    assert not Campaign.objects.exists()
    assert not Segment.objects.exists()


def test_a_format_without_texts_cannot_create_a_campaign(owner: Any) -> None:
    rows = [{"annotator": "a", "system": "s", "segment": "1", "type": "SYSTEM", "score": 50}]
    table = UploadFile("scores.tsv", judgment_file_text(rows), "")
    with pytest.raises(UploadError) as refused:
        campaign_from_release(owner=owner, name="x", files=[table])
    assert "these formats can create a campaign: mqm" in str(refused.value)
    with pytest.raises(UploadError, match="takes no other file"):
        campaign_from_release(
            owner=owner, name="x", files=[tsv()], companions=[UploadFile("b.json", b"{}")]
        )
    assert not Campaign.objects.exists()


def test_the_command_creates_the_campaign_and_prints_its_id(owner: Any, tmp_path: Path) -> None:
    path = tmp_path / "mqm_ted_ende.tsv"
    path.write_bytes(tsv().content)
    out = io.StringIO()
    call_command(
        "import_judgments",
        "--create-campaign",
        "TED en-de",
        "--user",
        owner.username,
        "--source-language",
        "en",
        "--target-language",
        "de",
        str(path),
        stdout=out,
    )
    campaign = Campaign.objects.get(pk=out.getvalue().splitlines()[-1])
    assert (campaign.name, campaign.owner, campaign.source_language) == ("TED en-de", owner, "en")
    assert (
        JudgmentValue.objects.filter(judgment__item__task__config__campaign=campaign).count() == 17
    )


def test_the_command_needs_an_owner_unless_one_superuser_is_there(tmp_path: Path) -> None:
    path = tmp_path / "mqm_ted_ende.tsv"
    path.write_bytes(tsv().content)
    with pytest.raises(CommandError, match="give --user"):
        call_command("import_judgments", "--create-campaign", "TED", str(path), verbosity=0)
    admin = make_user("admin", is_superuser=True, is_staff=True)
    out = io.StringIO()
    call_command("import_judgments", "--create-campaign", "TED", str(path), stdout=out, verbosity=0)
    assert Campaign.objects.get(pk=out.getvalue().splitlines()[-1]).owner == admin


def test_the_analysis_page_marks_the_human_systems(owner: Any, client: Any) -> None:
    campaign = campaign_from_release(owner=owner, name="TED en-de", files=[tsv()]).campaign
    client.login(username=owner.username, password=PASSWORD)
    page = client.get(reverse("campaign_analysis", args=[campaign.pk])).content.decode()
    marked = {name for name in TARGETS if f'{name} <span class="tag human-system"' in page}
    assert marked == {"ref-A", "Human-B"}


@pytest.mark.parametrize(
    ("name", "human"),
    [
        ("ref", True),
        ("ref-A", True),
        ("refA", True),
        ("refB", True),
        ("Human-B.0", True),
        ("human", True),
        ("HUMAN-P", True),
        ("refine-mt", False),
        ("Online-W", False),
        ("HuaweiTSC", False),
    ],
)
def test_googles_and_wmts_reference_names_are_human(name: str, human: bool) -> None:
    assert system_name_is_human(name) is human


def test_the_api_creates_the_campaign_for_an_organizer_only(owner: Any, client: Any) -> None:
    url = reverse("api-campaign-from-release")

    def post() -> Any:
        upload = SimpleUploadedFile("mqm_ted_ende.tsv", tsv().content)
        return client.post(url, {"file": upload, "campaign_name": "TED", "target_language": "de"})

    make_user("outsider")
    client.login(username="outsider", password=PASSWORD)
    assert post().status_code == 403
    client.login(username=owner.username, password=PASSWORD)
    answer = post()
    assert answer.status_code == 201
    campaign = Campaign.objects.get(pk=answer.json()["id"])
    assert (campaign.owner, campaign.target_language) == (owner, "de")
    assert answer.json()["summary"]["judgments"] == 17
    bad = SimpleUploadedFile(
        "bad.tsv", HEADER.encode() + b"\nref-A\td\t1\tx\tr\ts\tt\tStyle\tMinor\n"
    )
    refused = client.post(url, {"file": bad, "campaign_name": "Bad"})
    assert refused.status_code == 400
    assert refused.json()["problems"][0]["line"] == 2
    assert Campaign.objects.count() == 1


@pytest.mark.parametrize(
    ("changed", "message"),
    [
        ({1: "talk.9"}, "seg_id 1 is in doc 'talk.9' here and in doc 'talk.1' on an earlier line"),
        ({5: "We cannot stand on the Earth."}, "the source differs from line 2's of seg_id 1"),
    ],
)
def test_a_segment_the_rows_give_two_ways_is_refused_naming_the_line(
    owner: Any, changed: dict[int, str], message: str
) -> None:
    rows = release_rows()
    # A second rater's row of Online-W's first segment, with its doc or source changed.
    extra = list(next(r for r in rows if r[0] == "Online-W" and r[3] == "1"))
    extra[4] = "rater9"
    for column, value in changed.items():
        extra[column] = value
    rows.append(tuple(extra))
    with pytest.raises(UploadError) as refused:
        campaign_from_release(owner=owner, name="TED en-de", files=[tsv(rows)])
    [problem] = refused.value.problems
    assert (problem.line, problem.message[: len(message)]) == (len(rows) + 1, message)
    assert not Campaign.objects.exists()


def test_the_campaigns_google_tsv_writes_googles_seg_ids_and_reads_back(owner: Any) -> None:
    campaign = campaign_from_release(owner=owner, name="TED en-de", files=[tsv()]).campaign
    written = list(mqm_tsv(campaign=campaign, labels={}))
    assert {tuple(line.split("\t")[1:4:2]) for line in written[1:]} == set(SEGMENTS)
    back = UploadFile("back.tsv", "".join(written).encode())
    record = judgments_import(campaign=campaign, upload=back, user=None)
    scores: dict[str, list[float]] = defaultdict(list)
    for system, value in JudgmentValue.objects.filter(
        judgment__item__task__config=record.config
    ).values_list("output__system__name", "value"):
        scores[system].append(-value)
    assert {s: sum(v) / len(v) for s, v in scores.items()} == pytest.approx(BY_HAND)


@pytest.mark.parametrize("preset", [None, "wmt"])
def test_a_new_mqm_campaigns_default_ranking_is_googles(owner: Any, preset: str | None) -> None:
    # Google ranks MQM by raw points (mean weighted errors, lower is better): BY_HAND's order.
    # The default analysis, and the WMT preset over it, rank MQM in raw points too, so the
    # headline score is the mean of −MQM, not a z-score.
    campaign = campaign_from_release(owner=owner, name="TED en-de", files=[tsv()]).campaign
    settings = AnalysisSettings() if preset is None else AnalysisSettings().with_preset(preset)
    [criterion] = campaign_analysis_compute(campaign=campaign, settings=settings).criteria
    ranked = [s.name for s in sorted(criterion.systems, key=lambda s: s.position)]
    assert ranked == sorted(BY_HAND, key=BY_HAND.__getitem__)
    assert criterion.method.space == "raw"
    assert all(s.score is not None and s.score <= 0 for s in criterion.systems)
