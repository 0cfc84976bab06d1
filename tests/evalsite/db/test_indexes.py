"""No table of ours carries an index that another makes redundant: no plain index whose columns
begin another index's (migrations annotation 0004 and 0005, metrics 0005 dropped them). Each
cost every insert, and every update that is not HOT, an index entry."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import connection

from annotation.models import Assignment, Item, ItemOutput, Judgment, JudgmentValue, Segment

pytestmark = pytest.mark.django_db


def indexes(table: str) -> dict[str, tuple[bool, list[str]]]:
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, table)
    return {
        name: (info["unique"] or info["primary_key"], info["columns"])
        for name, info in found.items()
        if info["index"] or info["unique"] or info["primary_key"]
    }


def our_tables() -> list[str]:
    """The tables of our models, with the join tables Django creates for many-to-many fields
    left out: their indexes are Django's own."""
    return [
        model._meta.db_table
        for app in ("annotation", "metrics")
        for model in apps.get_app_config(app).get_models()
    ]


def redundant(table: str) -> list[tuple[str, str]]:
    found = indexes(table)
    return [
        (name, other)
        for name, (unique, columns) in found.items()
        # PostgreSQL's `…_like` companion of an indexed text column (varchar_pattern_ops) serves
        # LIKE 'prefix%', which the plain index cannot: another operator class, not a copy.
        if not unique and not name.endswith("_like")
        for other, (_, longer) in found.items()
        if other != name and longer[: len(columns)] == columns
    ]


def test_our_tables_are_all_checked() -> None:
    tables = our_tables()
    assert len(tables) >= 25
    assert {"annotation_judgment", "annotation_item", "metrics_statschunk"} <= set(tables)


@pytest.mark.parametrize("table", our_tables())
def test_no_plain_index_is_a_prefix_of_another(table: str) -> None:
    assert redundant(table) == []


def test_the_unique_indexes_serve_the_lookups_by_the_dropped_columns() -> None:
    judgment = indexes(Judgment._meta.db_table)
    assert (True, ["annotator_id", "item_id"]) in judgment.values()
    value = indexes(JudgmentValue._meta.db_table)
    assert (True, ["judgment_id", "output_id", "criterion"]) in value.values()
    assert (True, ["task_id", "annotator_id"]) in indexes(Assignment._meta.db_table).values()
    assert (True, ["task_id", "position"]) in indexes(Item._meta.db_table).values()
    assert (True, ["item_id", "position"]) in indexes(ItemOutput._meta.db_table).values()
    assert (True, ["campaign_id", "position"]) in indexes(Segment._meta.db_table).values()
    # The foreign keys no longer index starts with keep their own indexes.
    assert (False, ["item_id"]) in judgment.values()
    assert (False, ["assignment_id"]) in judgment.values()
    assert (False, ["output_id"]) in value.values()
    assert (False, ["annotator_id"]) in indexes(Assignment._meta.db_table).values()
    assert (False, ["segment_id"]) in indexes(Item._meta.db_table).values()
