"""Rows of the hot-path SQL (evalsite/db/rawsql.py) become the instances the ORM makes: every
field's
value, the database's converters applied, loaded from the database (not adding). ``hot_rows``
answers as a Django cursor does: the same rows, Django's errors, queries seen by the tools that
watch them."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import DatabaseError, ProgrammingError, connections, models, transaction
from django.db.models.signals import post_init
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext
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
from annotation.tasking.services import task_assign_next
from evalsite.db.rawsql import Columns, chain_rows, hot_cursor, hot_rows, numbered
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
    from annotation.judging.services import judgment_record

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


def test_chain_rows_share_the_instances_of_equal_joined_rows(owner, annotator) -> None:  # type: ignore[no-untyped-def]
    """The outputs of two items, each read with its item and task: the outputs of one item
    share one item (and task), each as the ORM reads it; the other item's are its own."""
    campaign = make_rich_campaign(owner=owner)
    campaign.annotators.add(annotator)
    config = make_config(campaign, "adequacy_fluency", items_per_task=3)
    assignment = task_assign_next(config=config, annotator=annotator)
    items = list(Item.objects.filter(task=assignment.task).order_by("position")[:2])
    columns = [Columns(ItemOutput, "o"), Columns(Item, "i"), Columns(Task, "t")]
    db = transaction.get_connection()
    rows = hot_rows(
        db,
        f"""SELECT {", ".join(c.sql for c in columns)}, o."id" * 2
        FROM "{ItemOutput._meta.db_table}" o
        JOIN "{Item._meta.db_table}" i ON o."item_id" = i."id"
        JOIN "{Task._meta.db_table}" t ON i."task_id" = t."id"
        WHERE i."id" IN (%s, %s) ORDER BY i."position", o."position"
        """,
        [items[0].pk, items[1].pk],
    )
    read = chain_rows(rows, columns, ["item", "task"], db)
    assert len(read) == ItemOutput.objects.filter(item__in=items).count() > 2
    for output, rest in read:
        orm = ItemOutput.objects.select_related("item__task").get(pk=output.pk)
        same(output, orm)
        same(output.item, orm.item)
        same(output.item.task, orm.item.task)
        assert list(rest) == [output.pk * 2]
    by_item: dict[int, set[int]] = {}
    for output, _rest in read:
        by_item.setdefault(output.item_id, set()).add(id(output.item))
    assert {item_id: len(ids) for item_id, ids in by_item.items()} == {i.pk: 1 for i in items}
    assert read[0][0].item is not read[-1][0].item


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


SERIES = "SELECT n, n * %s FROM generate_series(1, %s) AS n ORDER BY n"


def test_hot_rows_answers_as_a_django_cursor() -> None:
    db = transaction.get_connection()
    with db.cursor() as cursor:
        cursor.execute(SERIES, [3, 4])
        expected = cursor.fetchall()
    assert expected == [(1, 3), (2, 6), (3, 9), (4, 12)]
    # Repeated past the prepare threshold, on the cursor kept for the connection.
    for _ in range(8):
        assert hot_rows(db, SERIES, [3, 4]) == expected
    assert hot_rows(db, "SELECT 1 WHERE false", []) == []


def test_numbered_placeholders_are_what_psycopg_sends() -> None:
    """The driver's own conversion of ``%s`` and ``%%`` is the reference."""
    from psycopg._queries import PostgresQuery
    from psycopg.adapt import Transformer

    db = transaction.get_connection()
    db.ensure_connection()
    for sql, params in [
        (SERIES, [3, 4]),
        ("SELECT %s::text, '100%%', %s::int WHERE 'a' LIKE 'a%%'", ["x", 2]),
        ("SELECT %s", [1]),
        ("SELECT 1", []),
    ]:
        query = PostgresQuery(Transformer(db.connection))
        query.convert(sql, params)
        assert numbered(sql, "utf-8") == query.query
    # Any other use of ``%`` is left to the driver.
    assert numbered("SELECT %(name)s", "utf-8") is None
    assert numbered("SELECT %b", "utf-8") is None
    assert numbered("SELECT 1 %", "utf-8") is None


def test_hot_rows_past_the_drivers_cached_parameters() -> None:
    """A statement of more parameters than psycopg keeps its conversion for (50), with a
    literal percent sign and placeholders it does not number (which go to the driver)."""
    db = transaction.get_connection()
    many = "SELECT " + " + ".join(["%s::int"] * 60) + ", '5%%'"
    with db.cursor() as cursor:
        cursor.execute(many, list(range(60)))
        expected = cursor.fetchall()
    assert expected == [(sum(range(60)), "5%")]
    for _ in range(8):
        assert hot_rows(db, many, list(range(60))) == expected
    assert hot_rows(db, "SELECT %(a)s::int + 1", {"a": 1}) == [(2,)]


def test_hot_rows_raises_djangos_errors_and_keeps_working() -> None:
    db = transaction.get_connection()
    with pytest.raises(ProgrammingError), transaction.atomic():
        hot_rows(db, "SELECT no_such_column FROM generate_series(1, 2)", [])
    # Back at the savepoint, the kept cursor runs the next query.
    assert hot_rows(db, SERIES, [2, 2]) == [(1, 2), (2, 4)]


@pytest.mark.django_db(transaction=True)
def test_hot_rows_in_a_broken_transaction_and_after_a_reconnect() -> None:
    db = connections["default"]
    with transaction.atomic():
        with pytest.raises(DatabaseError), transaction.atomic(savepoint=False):
            hot_rows(db, "SELECT 1 / 0", [])
        # As Django's cursors do: no query in a transaction marked for rollback.
        with pytest.raises(TransactionManagementError):
            hot_rows(db, "SELECT 1", [])
    assert hot_rows(db, "SELECT 1", []) == [(1,)]
    first = db.connection
    db.close()
    assert hot_rows(db, SERIES, [5, 1]) == [(1, 5)]
    assert db.connection is not first


def test_hot_rows_are_seen_by_query_logging_and_execute_wrappers() -> None:
    db = transaction.get_connection()
    with CaptureQueriesContext(db) as captured:
        assert hot_rows(db, SERIES, [7, 1]) == [(1, 7)]
    assert len(captured.captured_queries) == 1
    assert "generate_series(1, 1)" in captured.captured_queries[0]["sql"]

    seen: list[str] = []

    def wrapper(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        seen.append(sql)
        return execute(sql, params, many, context)

    with db.execute_wrapper(wrapper):
        assert hot_rows(db, SERIES, [1, 2]) == [(1, 1), (2, 2)]
    assert seen == [SERIES]
