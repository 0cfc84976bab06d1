"""Database constraints hold the data invariants, whatever code writes the rows."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.db import IntegrityError, transaction

from annotation.models import Document, Reference, Run, Segment, System, Translation
from tests.factories import make_campaign, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def data():  # type: ignore[no-untyped-def]
    owner = make_user("owner", organizer=True)
    campaign = make_campaign(owner=owner, with_data=True)
    segment = Segment.objects.filter(campaign=campaign).order_by("position").first()
    run = Run.objects.filter(system__campaign=campaign).first()
    return campaign, segment, run


VIOLATIONS: dict[str, Callable[..., object]] = {
    "two segments at one position": lambda c, s, r: Segment.objects.create(
        campaign=c,
        document=s.document,
        position=s.position,
        position_in_document=99,
        external_id="x",
        source="x",
    ),
    "two segments at one place in a document": lambda c, s, r: Segment.objects.create(
        campaign=c,
        document=s.document,
        position=999,
        position_in_document=0,
        external_id="x",
        source="x",
    ),
    "a segment with an empty source": lambda c, s, r: Segment.objects.create(
        campaign=c,
        document=s.document,
        position=999,
        position_in_document=99,
        external_id="x",
        source="",
    ),
    "two documents with one id": lambda c, s, r: Document.objects.create(
        campaign=c, external_id=s.document.external_id, position=99
    ),
    "two documents at one position": lambda c, s, r: Document.objects.create(
        campaign=c, external_id="new", position=s.document.position
    ),
    "two references with one index": lambda c, s, r: Reference.objects.create(
        segment=s, index=0, text="again"
    ),
    "two systems with one name": lambda c, s, r: System.objects.create(
        campaign=c, name=r.system.name
    ),
    "a system without a name": lambda c, s, r: System.objects.create(campaign=c, name=""),
    "two runs with one name": lambda c, s, r: Run.objects.create(
        system=r.system, name=r.name, position=99
    ),
    "two translations for one run and segment": lambda c, s, r: Translation.objects.create(
        run=r, segment=s, text="again"
    ),
    "two runs at one position": lambda c, s, r: Run.objects.create(
        system=r.system, name="another", position=r.position
    ),
    "a run without a name": lambda c, s, r: Run.objects.create(
        system=r.system, name="", position=99
    ),
    "two segments with one id in a document": lambda c, s, r: Segment.objects.create(
        campaign=c,
        document=s.document,
        position=999,
        position_in_document=99,
        external_id=s.external_id,
        source="x",
    ),
    "a document without an id": lambda c, s, r: Document.objects.create(
        campaign=c, external_id="", position=99
    ),
    "a campaign without a source language": lambda c, s, r: (
        type(c).objects.filter(pk=c.pk).update(source_language="")
    ),
    "a campaign without a target language": lambda c, s, r: (
        type(c).objects.filter(pk=c.pk).update(target_language="")
    ),
}


@pytest.mark.parametrize("violation", list(VIOLATIONS), ids=list(VIOLATIONS))
def test_the_database_refuses(violation: str, data) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(IntegrityError), transaction.atomic():
        VIOLATIONS[violation](*data)


def test_a_campaign_without_a_name_is_refused(data) -> None:  # type: ignore[no-untyped-def]
    campaign = data[0]
    with pytest.raises(IntegrityError), transaction.atomic():
        type(campaign).objects.filter(pk=campaign.pk).update(name="")
