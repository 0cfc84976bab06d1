"""Typed JSON documents read back whole or not at all: every key that does not fit is named."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest

from evalcore.documents import OMIT_NONE, JsonDocument


@dataclass(frozen=True)
class Pair(JsonDocument):
    tau: float | None
    pairs_from: str = field(metadata={"key": "from"})


@dataclass(frozen=True)
class Entry(JsonDocument):
    key: str
    n: int
    sign: Literal["+", "-"]
    values: list[float | None]
    pair: Pair | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class Doc(JsonDocument):
    SCHEMA = 2

    ok: bool
    entries: list[Entry]
    params: dict[str, Any]
    names: dict[str, str]


DOC = Doc(
    ok=True,
    entries=[
        Entry("bleu", 3, "+", [1.5, None], Pair(0.25, "ranks")),
        Entry("ter", 4, "-", []),
    ],
    params={"seed": 12345, "nested": {"a": [1, 2]}},
    names={"1": "A"},
)


def stored() -> dict[str, Any]:
    """DOC as a database hands it back: through JSON text."""
    loaded: dict[str, Any] = json.loads(json.dumps(DOC.to_json()))
    return loaded


def test_a_document_is_written_as_plain_json_and_read_back_to_the_same_object() -> None:
    doc = stored()
    assert doc["schema"] == 2
    assert doc["entries"][0]["pair"] == {"tau": 0.25, "from": "ranks"}
    assert "pair" not in doc["entries"][1]  # None with OMIT_NONE: absent, not null
    assert Doc.from_json(doc) == DOC
    assert Doc.from_json(doc).to_json() == doc


def test_an_integer_reads_as_a_float_and_a_document_without_schema_as_schema_one() -> None:
    doc = stored()
    doc["entries"][0]["values"] = [2, None]
    del doc["schema"]
    read = Doc.from_json(doc)
    assert read.entries[0].values == [2.0, None]
    assert isinstance(read.entries[0].values[0], float)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["entries"][0].pop("n"), r"Doc\.entries\[0\]: missing key 'n'"),
        (
            lambda d: d["entries"][1].update(extra=1),
            r"Doc\.entries\[1\]: unknown key 'extra'",
        ),
        (
            lambda d: d["entries"][0]["pair"].update(From="x"),
            r"Doc\.entries\[0\]\.pair: unknown key 'From'",
        ),
        (
            lambda d: d["entries"][0].update(n="3"),
            r"Doc\.entries\[0\]\.n: expected int, not str",
        ),
        (lambda d: d["entries"][0].update(n=True), r"Doc\.entries\[0\]\.n: expected int"),
        (
            lambda d: d["entries"][0].update(values=[1.0, "x"]),
            r"Doc\.entries\[0\]\.values\[1\]: expected a number",
        ),
        (lambda d: d["entries"][0].update(sign="*"), r"'\*' is not one of \['\+', '-'\]"),
        (lambda d: d.update(ok=None), r"Doc\.ok: expected bool, not NoneType"),
        (lambda d: d.update(entries={}), r"Doc\.entries: expected a list, not dict"),
        (lambda d: d["names"].update(two=2), r"Doc\.names\.two: expected str, not int"),
        (lambda d: d.update(schema=3), r"'schema' 3 is newer than this code reads \(2\)"),
        (lambda d: d.update(schema="2"), r"unknown 'schema' '2'"),
    ],
)
def test_a_key_that_does_not_fit_is_refused_by_its_path(change: Any, message: str) -> None:
    doc = stored()
    change(doc)
    with pytest.raises(ValueError, match=message):
        Doc.from_json(doc)


def test_not_a_json_object_is_refused() -> None:
    with pytest.raises(ValueError, match="Doc: expected a JSON object, not list"):
        Doc.from_json([])


def test_nan_and_infinities_are_refused_when_written() -> None:
    bad = Entry("bleu", 3, "+", [math.nan])
    with pytest.raises(ValueError, match=r"Entry\.values\[0\]: nan is not a JSON number"):
        bad.to_json()
    with pytest.raises(ValueError, match=r"Doc\.params\.x: inf is not a JSON number"):
        Doc(ok=True, entries=[], params={"x": math.inf}, names={}).to_json()
