"""The submit's quick reading of its body (``annotate_api.submit_fields``) against DRF's
serializer, the reference: for every body it either declines (None, and the serializer reads it)
or returns exactly the serializer's fields."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from rest_framework import serializers

from annotation.judging.api import SubmitSerializer, submit_fields

SID = "1f0e8a52-4f0a-4b8e-9a43-2f6f5f1f9b10"
VALID = {"item": 7, "revision": 0, "submission_id": SID, "answer": {"12": {"score": 73}}}


def reference(body: Any) -> dict[str, Any] | None:
    """What DRF's fields make of the body (the protocol checks, which need the database, are
    the same code on both paths); None where DRF refuses it."""
    try:
        return dict(SubmitSerializer().to_internal_value(body))
    except serializers.ValidationError:
        return None


BODIES: list[Any] = [
    VALID,
    VALID | {"extra": "ignored"},
    VALID | {"revision": 3},
    VALID | {"submission_id": SID.replace("-", "")},
    VALID | {"submission_id": SID.upper()},
    VALID | {"submission_id": "{" + SID + "}"},
    VALID | {"submission_id": "urn:uuid:" + SID},
    VALID | {"answer": {}},
    VALID | {"answer": {"12": {}}},
    VALID
    | {"answer": {"12": {"adequacy": 4, "fluency": 5}, "13": {"adequacy": 1.0, "fluency": 2.5}}},
    VALID | {"answer": {"12": {"rank": 1}, "13": {"rank": 1}, "14": {"rank": 3}}},
    VALID | {"answer": {"12": {"score": -0.0}}},
    VALID | {"answer": {"12": {"score": 10**400}}},
    VALID | {"answer": {"12": {"score": 1e308}}},
    VALID | {"answer": {"12": {"score": True}}},
    VALID | {"answer": {"12": {"score": "73"}}},
    VALID | {"answer": {"12": {"score": None}}},
    VALID | {"answer": {"12": {"score": [73]}}},
    VALID | {"answer": {"12": {"spans": [{"start": 0, "end": 3, "severity": "minor"}]}}},
    VALID | {"answer": {"12": {"score": 40, "spans": []}}},
    VALID | {"answer": {"12": {"spans": {"start": 0}}}},
    VALID | {"answer": {"12": {"spans": "0-3:minor"}}},
    VALID | {"answer": {"12": {"score": [{"start": 0, "end": 3, "severity": "minor"}]}}},
    VALID | {"answer": {"12": 73}},
    VALID | {"answer": [73]},
    VALID | {"answer": "73"},
    VALID | {"item": "7"},
    VALID | {"item": 7.0},
    VALID | {"item": True},
    VALID | {"item": None},
    VALID | {"revision": -1},
    VALID | {"revision": "0"},
    VALID | {"submission_id": "not-a-uuid"},
    VALID | {"submission_id": 12345},
    VALID | {"submission_id": None},
    {k: v for k, v in VALID.items() if k != "answer"},
    {k: v for k, v in VALID.items() if k != "submission_id"},
    {},
    [],
    "text",
    None,
]


@pytest.mark.parametrize("body", BODIES, ids=range(len(BODIES)))
def test_the_quick_reading_declines_or_agrees_with_the_serializer(body: Any) -> None:
    quick = submit_fields(body)
    if quick is not None:
        assert quick == reference(body)
        assert isinstance(quick["submission_id"], uuid.UUID)


def test_the_usual_bodies_are_read_quickly() -> None:
    # The bodies the annotation page and API clients send: ints and floats in the answer.
    for number in BODIES[:12]:
        assert submit_fields(number) is not None, number
    assert submit_fields(VALID) == {
        "item": 7,
        "revision": 0,
        "submission_id": uuid.UUID(SID),
        "answer": {"12": {"score": 73.0}},
    }
