"""``import_judgments --create-campaign NAME --batches BATCHES SCORES``: Appraise's ESA export of
the ESA study's second round (shared/data/esa-wmt23-rc6/) becomes an analysed campaign in one
step: its texts from the batches, its judgments on them, the id printed on the last line; and
the same scores without their batches are refused, creating nothing."""

from __future__ import annotations

import gzip
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Campaign, Document, JudgmentImport, Segment, System
from tests.factories import make_user
from tests.support.shared_data import shared_data_or_skip

pytestmark = pytest.mark.django_db

DATA: Path = shared_data_or_skip("esa-wmt23-rc6")
SCORES = "240520rc6ESA.scores.csv"
BATCHES = "batches_wmt23_en-de_esa.json.gz"


def _scores(tmp_path: Path) -> Path:
    path = tmp_path / SCORES
    path.write_bytes(gzip.decompress((DATA / f"{SCORES}.gz").read_bytes()))
    return path


def test_the_command_builds_the_campaign_from_the_batches(tmp_path: Path) -> None:
    owner = make_user("esa-organizer", organizer=True)
    out = StringIO()
    call_command(
        "import_judgments",
        "--create-campaign",
        "ESA rc6",
        "--user",
        owner.get_username(),
        "--batches",
        str(DATA / BATCHES),
        str(_scores(tmp_path)),
        verbosity=0,
        stdout=out,
    )
    campaign = Campaign.objects.get(pk=out.getvalue().strip().splitlines()[-1])
    assert (campaign.name, campaign.owner) == ("ESA rc6", owner)
    record = JudgmentImport.objects.get(campaign=campaign)
    assert record.config.protocol == "esa"
    # 3,327 rows less 204 tutorial, 15 duplicate and 21 earlier answers of resubmitted items.
    assert record.summary["rows"] == 3327 - 204 - 15 - 21
    assert Segment.objects.filter(campaign=campaign).count() > 0
    assert Document.objects.filter(campaign=campaign).exists()
    assert System.objects.filter(campaign=campaign).count() >= 2


def test_the_scores_without_their_batches_create_nothing(tmp_path: Path) -> None:
    owner = make_user("esa-organizer", organizer=True)
    with pytest.raises(CommandError, match="nothing created") as refused:
        call_command(
            "import_judgments",
            "--create-campaign",
            "ESA rc6",
            "--user",
            owner.get_username(),
            str(_scores(tmp_path)),
            verbosity=0,
        )
    assert "batches" in str(refused.value)
    assert not Campaign.objects.exists()
