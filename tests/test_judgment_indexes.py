"""The judgment tables, written on every submit, carry no index that another makes redundant:
no plain index whose columns begin another index's (migration 0004 dropped two)."""

from __future__ import annotations

import pytest
from django.db import connection

from annotation.models import Judgment, JudgmentValue

pytestmark = pytest.mark.django_db


def indexes(table: str) -> dict[str, tuple[bool, list[str]]]:
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, table)
    return {
        name: (info["unique"] or info["primary_key"], info["columns"])
        for name, info in found.items()
        if info["index"] or info["unique"] or info["primary_key"]
    }


@pytest.mark.parametrize("model", [Judgment, JudgmentValue])
def test_no_plain_index_is_a_prefix_of_another(model) -> None:  # type: ignore[no-untyped-def]
    table = indexes(model._meta.db_table)
    redundant = [
        (name, other)
        for name, (unique, columns) in table.items()
        if not unique
        for other, (_, longer) in table.items()
        if other != name and longer[: len(columns)] == columns
    ]
    assert redundant == []


def test_the_unique_indexes_still_serve_the_lookups_by_annotator_and_by_judgment() -> None:
    judgment = indexes(Judgment._meta.db_table)
    assert (True, ["annotator_id", "item_id"]) in judgment.values()
    value = indexes(JudgmentValue._meta.db_table)
    assert (True, ["judgment_id", "output_id", "criterion"]) in value.values()
    # The other foreign keys keep their own indexes.
    assert (False, ["item_id"]) in judgment.values()
    assert (False, ["assignment_id"]) in judgment.values()
    assert (False, ["output_id"]) in value.values()
