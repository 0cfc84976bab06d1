"""WMT names systems with ids such as ``HuaweiTSC.5``: an import refuses an unknown name with the
campaign's close matches, takes a name map (page, API, command), and previews the mapping
without storing anything."""

from __future__ import annotations

from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.campaigns.uploads import UploadError, UploadFile
from annotation.judgment_import.formats import judgment_file_text, system_map_parse
from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.services import judgments_import
from annotation.models import Judgment, JudgmentImport
from tests.analysis_factories import make_text_campaign
from tests.factories import PASSWORD, imports_run_queued

pytestmark = pytest.mark.django_db

MAP = "HuaweiTSC.5 = HuaweiTSC\n# a comment\n\nFacebook-AI.12\tFacebook-AI\n"


@pytest.fixture
def campaign(owner: Any) -> Any:
    made, *_ = make_text_campaign(
        owner=owner, n_segments=4, system_names=["HuaweiTSC", "Facebook-AI"]
    )
    return made


def _file() -> bytes:
    return judgment_file_text(
        [
            {
                "annotator": "w1",
                "system": system,
                "segment": str(n),
                "type": "SYSTEM",
                "score": "60",
            }
            for system in ("HuaweiTSC.5", "Facebook-AI.12")
            for n in range(1, 5)
        ]
    )


def test_a_name_map_is_read_line_by_line_and_refuses_what_it_cannot_read() -> None:
    assert system_map_parse(MAP) == {"HuaweiTSC.5": "HuaweiTSC", "Facebook-AI.12": "Facebook-AI"}
    with pytest.raises(UploadError) as refused:
        system_map_parse("a = b\nno separator\na = c\n")
    assert [(p.line, p.message) for p in refused.value.problems] == [
        (2, "expected 'name in the file = name in the campaign'"),
        (3, "'a' is mapped twice"),
    ]


def test_an_unknown_system_is_refused_with_the_campaigns_close_names(
    campaign: Any, owner: Any
) -> None:
    with pytest.raises(UploadError) as refused:
        judgments_import(campaign=campaign, upload=UploadFile("wmt.tsv", _file()), user=owner)
    first = refused.value.problems[0]
    assert first.line == 2
    assert first.message.startswith("unknown system 'HuaweiTSC.5'; did you mean 'HuaweiTSC'?")
    assert not Judgment.objects.exists()


def test_the_map_imports_under_the_campaigns_names(campaign: Any, owner: Any) -> None:
    record = judgments_import(
        campaign=campaign,
        upload=UploadFile("wmt.tsv", _file()),
        user=owner,
        options=ImportOptions(system_map=system_map_parse(MAP)),
    )
    assert record.summary["judgments"] == 8
    systems = set(
        Judgment.objects.filter(item__task__config=record.config).values_list(
            "item__outputs__system__name", flat=True
        )
    )
    assert systems == {"HuaweiTSC", "Facebook-AI"}


def test_the_page_previews_the_mapping_then_imports(campaign: Any, owner: Any) -> None:
    client = Client()
    assert client.login(username=owner.get_username(), password=PASSWORD)
    url = reverse("campaign_judgment_import", args=[campaign.pk])
    fields = {"file_format": "auto", "protocol": "direct_assessment", "line_base": "1"}
    preview = client.post(
        url,
        {**fields, "system_map": MAP, "preview": "1", "file": SimpleUploadedFile("w.tsv", _file())},
    )
    assert preview.status_code == 200
    html = preview.content.decode()
    assert 'id="import-preview"' in html
    assert 'HuaweiTSC.5</td><td class="name">HuaweiTSC</td>' in html
    assert not JudgmentImport.objects.exists()
    done = client.post(
        url, {**fields, "system_map": MAP, "file": SimpleUploadedFile("w.tsv", _file())}
    )
    assert done.status_code == 302
    [job] = imports_run_queued()
    assert job.status == "done", job.problems
    assert JudgmentImport.objects.count() == 1


def test_the_api_dry_run_answers_the_mapping_and_stores_nothing(campaign: Any, owner: Any) -> None:
    client = Client()
    assert client.login(username=owner.get_username(), password=PASSWORD)
    url = reverse("api-campaign-judgment-imports", args=[campaign.pk])
    body = {"system_map": MAP, "dry_run": "true", "file": SimpleUploadedFile("w.tsv", _file())}
    answer = client.post(url, body)
    assert answer.status_code == 200
    assert answer.json()["systems"] == [
        {"file": "HuaweiTSC.5", "campaign": "HuaweiTSC", "rows": 4},
        {"file": "Facebook-AI.12", "campaign": "Facebook-AI", "rows": 4},
    ]
    assert answer.json()["judgments"] == 8
    assert not JudgmentImport.objects.exists()
    bad = client.post(url, {"system_map": "nonsense", "file": SimpleUploadedFile("w.tsv", _file())})
    assert bad.status_code == 400


def test_the_command_takes_a_map_file_and_a_dry_run(campaign: Any, tmp_path: Path) -> None:
    judgments = tmp_path / "wmt.tsv"
    judgments.write_bytes(_file())
    names = tmp_path / "names.txt"
    names.write_text(MAP, encoding="utf-8")
    out = StringIO()
    call_command(
        "import_judgments",
        str(campaign.pk),
        str(judgments),
        "--system-map",
        str(names),
        "--dry-run",
        stdout=out,
    )
    text = out.getvalue()
    assert "Nothing stored." in text
    assert "HuaweiTSC.5 -> HuaweiTSC: 4 rows" in text
    assert not JudgmentImport.objects.exists()
    call_command(
        "import_judgments",
        str(campaign.pk),
        str(judgments),
        "--system-map",
        str(names),
        stdout=StringIO(),
    )
    assert JudgmentImport.objects.count() == 1
