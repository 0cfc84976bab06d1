"""Rows of the hot-path SQL (evalsite/rawsql.py) become the instances the ORM makes: every field's
value, the database's converters applied, loaded from the database (not adding)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import models, transaction
from django.db.models.signals import post_init
from rest_framework.authtoken.models import Token

from annotation.models import (
    Assignment,
    Campaign,
    Document,
    Item,
    ItemOutput,
    Judgment,
    ProtocolConfig,
    Segment,
    Task,
)
from annotation.tasking import task_assign_next
from evalsite.rawsql import Columns, hot_cursor
from tests.factories import full_answer, make_config, make_rich_campaign

pytestmark = pytest.mark.django_db


def loaded(model: type[models.Model], pk: Any) -> tuple[models.Model, models.Model]:
    """The row of ``pk`` read with Columns, and the same row read by the ORM."""
    columns = Columns(model, "x")
    db = transaction.get_connection()
    key = model._meta.pk
    assert key is not None
    with hot_cursor(db) as cursor:
        cursor.execute(
            f'SELECT {columns.sql} FROM "{model._meta.db_table}" x WHERE x."{key.column}" = %s',
            [key.get_db_prep_value(pk, db)],
        )
        row = cursor.fetchone()
    return columns.instance(row, db), model.objects.get(pk=pk)


def same(ours: models.Model, orm: models.Model) -> None:
    assert type(ours) is type(orm)
    for field in type(orm)._meta.concrete_fields:
        assert getattr(ours, field.attname) == getattr(orm, field.attname), field.name
        assert type(getattr(ours, field.attname)) is type(getattr(orm, field.attname)), field.name
    assert (ours._state.adding, ours._state.db) == (False, orm._state.db)
    assert ours.pk == orm.pk


def test_every_hot_model_is_made_as_the_orm_makes_it(owner, annotator) -> None:  # type: ignore[no-untyped-def]
    from annotation.judging import judgment_record

    campaign = make_rich_campaign(owner=owner)
    campaign.annotators.add(annotator)
    config = make_config(campaign, "adequacy_fluency", items_per_task=3)
    assignment = task_assign_next(config=config, annotator=annotator)
    item = Item.objects.get(task=assignment.task, position=0)
    recorded = judgment_record(
        assignment_id=assignment.pk,
        annotator=annotator,
        item_id=item.pk,
        revision_seen=0,
        submission_id=uuid.uuid4(),
        answer=full_answer(item),
    )
    token = Token.objects.create(user=annotator)
    cases: list[tuple[type[models.Model], Any]] = [
        (Assignment, assignment.pk),  # uuid, datetimes, a nullable foreign key
        (Task, assignment.task_id),
        (ProtocolConfig, config.pk),
        (Campaign, campaign.pk),
        (Item, item.pk),
        (ItemOutput, ItemOutput.objects.filter(item=item).first().pk),  # type: ignore[union-attr]
        (Segment, item.segment_id),
        (Document, item.segment.document_id),
        (Judgment, recorded.judgment.pk),  # JSON, uuid, float
        (Token, token.pk),
        (get_user_model(), annotator.pk),
    ]
    for model, pk in cases:
        # Made directly, not by Model.from_db: what this test is about.
        assert Columns(model, "x").plain, model
        same(*loaded(model, pk))


def test_a_model_with_a_post_init_receiver_is_made_by_the_orm(owner) -> None:  # type: ignore[no-untyped-def]
    seen: list[Any] = []

    def note(sender: Any, instance: Any, **kwargs: Any) -> None:
        seen.append(instance.pk)

    campaign = make_rich_campaign(owner=owner)
    post_init.connect(note, sender=Campaign)
    try:
        ours, orm = loaded(Campaign, campaign.pk)
    finally:
        post_init.disconnect(note, sender=Campaign)
    same(ours, orm)
    assert seen == [campaign.pk, campaign.pk]  # once for ours, once for the ORM's
