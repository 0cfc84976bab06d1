"""Tutorial items from a small file: JSON (a list of items as the API takes them) or CSV
(columns source, reference, output, output2, …, feedback, expectation as JSON)."""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

from django.utils.translation import gettext as _

from annotation.tutorial.items import MAX_ITEMS, TutorialItemError

# A tutorial file is small: a few dozen items.
MAX_BYTES = 1_000_000
_OUTPUT_COLUMN = re.compile(r"^output(\d*)$")


def tutorial_file_parse(*, name: str, content: bytes) -> list[dict[str, Any]]:
    """The items of an uploaded file (by its name's extension: .json, else CSV); their
    content is checked when they are saved."""
    if len(content) > MAX_BYTES:
        raise TutorialItemError([_("The file is larger than 1 MB.")])
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise TutorialItemError([_("The file is not UTF-8 text.")]) from None
    items = _json_items(text) if name.lower().endswith(".json") else _csv_items(text)
    if not items:
        raise TutorialItemError([_("The file has no items.")])
    if len(items) > MAX_ITEMS:
        raise TutorialItemError([_("A tutorial has at most %(n)d items.") % {"n": MAX_ITEMS}])
    return items


def _json_items(text: str) -> list[dict[str, Any]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TutorialItemError([_("The file is not JSON: %(error)s") % {"error": exc}]) from None
    if isinstance(data, dict):
        data = data.get("items")
    if not isinstance(data, list) or not all(isinstance(i, dict) for i in data):
        raise TutorialItemError([_("A JSON file holds a list of items (objects).")])
    return data


def _csv_items(text: str) -> list[dict[str, Any]]:
    reader = csv.DictReader(io.StringIO(text))
    columns = reader.fieldnames or []
    outputs = sorted(
        (int(m.group(1) or 1), c) for c in columns if (m := _OUTPUT_COLUMN.match(c.strip()))
    )
    if not outputs or "expectation" not in columns:
        raise TutorialItemError([_("A CSV file needs the columns output and expectation.")])
    items = []
    for number, row in enumerate(reader, start=1):
        try:
            expectation = json.loads(row.get("expectation") or "{}")
        except json.JSONDecodeError:
            raise TutorialItemError(
                [_("Item %(n)d: the expectation is not JSON.") % {"n": number}]
            ) from None
        items.append(
            {
                "source": row.get("source") or "",
                "reference": row.get("reference") or "",
                "outputs": [row[c] for _n, c in outputs if (row.get(c) or "").strip()],
                "expectation": expectation,
                "feedback": row.get("feedback") or "",
            }
        )
    return items
