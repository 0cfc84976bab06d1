"""Numeric columns of a queryset as one numpy array, read without a Python object per value where
the database allows it."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import numpy.typing as npt
from django.db import connection
from django.db.models import (
    FloatField,
    QuerySet,
    Value,
)
from django.db.models.functions import Cast, Coalesce

from evalsite.db import features

FloatArray = npt.NDArray[np.float64]


def values_array(
    queryset: QuerySet[Any], columns: tuple[str, ...], *, chunk_size: int = 20_000
) -> FloatArray:
    """The numeric ``columns`` of a queryset as a float array (None becomes NaN).

    On PostgreSQL the rows come as one binary ``COPY``: every column cast to double precision
    with NULL as NaN, so that each row has the same size and numpy reads the whole stream with
    one ``frombuffer`` (no Python object per value). Elsewhere (SQLite) the rows are read in
    chunks through the ORM.
    """
    if features.copies_binary():
        return _copy_array(queryset, columns)
    rows = queryset.values_list(*columns).iterator(chunk_size=chunk_size)
    parts = []
    while True:
        chunk = list(itertools.islice(rows, chunk_size))
        if not chunk:
            break
        parts.append(np.array(chunk, dtype=np.float64))
    if not parts:
        return np.zeros((0, len(columns)), dtype=np.float64)
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def _copy_array(queryset: QuerySet[Any], columns: tuple[str, ...]) -> FloatArray:
    """PostgreSQL: each column aggregated into one ``bytea`` of big-endian doubles
    (``string_agg(float8send(x))``), so a million rows cross as a few buffers. All aggregates
    of one SELECT consume the rows in the same order, so the columns stay aligned; the rows
    are put in the order of the first column (the id) here."""
    names = [f"_f{i}" for i in range(len(columns))]
    floats = (
        queryset.order_by()
        .annotate(
            **{
                name: Coalesce(Cast(column, FloatField()), Value(math.nan, FloatField()))
                for name, column in zip(names, columns, strict=True)
            }
        )
        .values_list(*names)
    )
    inner, params = floats.query.sql_with_params()
    quote = connection.ops.quote_name
    aggregates = ", ".join(f"string_agg(float8send({quote(n)}), ''::bytea)" for n in names)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {aggregates} FROM ({inner}) AS rows", params)
        buffers = cursor.fetchone()
    if buffers is None or buffers[0] is None:
        return np.zeros((0, len(columns)), dtype=np.float64)
    table = np.column_stack([np.frombuffer(bytes(b), dtype=">f8") for b in buffers])
    table = table.astype(np.float64).reshape(-1, len(columns))
    return table[np.argsort(table[:, 0], kind="stable")]
