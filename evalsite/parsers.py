"""The API's JSON parser: a body that no view could use is refused here, with 400 and a reason,
before any view sees it.

DRF's own parser hands on whatever ``json.load`` makes of a body, and some of that ends in a 500
far from the parser: JSON nested a thousand deep (``RecursionError`` while parsing, or later in
a serializer or on the way to a jsonb column), ``1e400`` (infinity, which PostgreSQL refuses),
an integer of 400 digits (``OverflowError`` wherever it meets a float), a lone surrogate or a NUL
character (no PostgreSQL text holds them). So, as I-JSON (RFC 7493) asks of a message: numbers
are finite, integers within ±(2⁵³ − 1), strings are Unicode text without unpaired surrogates,
and here also without NUL and nested at most ``MAX_DEPTH`` deep (our deepest body, a tutorial
item's expected spans, is 6). Views keep checking types and ranges of their own fields.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import IO, Any

from django.utils.translation import gettext as _
from rest_framework import parsers
from rest_framework.exceptions import ParseError

MAX_DEPTH = 32
# I-JSON: integers that every JSON reader holds exactly (a double's 53 bits).
MAX_INTEGER = 2**53 - 1
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, refusing what no view can use (see the module's docstring)."""

    def parse(
        self,
        stream: IO[bytes],
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        raw = stream.read() if stream is not None else b""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(
                _("The body is not UTF-8 (byte %(n)d).") % {"n": exc.start + 1}
            ) from None
        try:
            data = json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=_int)
        except RecursionError:
            raise ParseError(_too_deep()) from None
        except ValueError as exc:
            raise ParseError(_("The body is not valid JSON: %(error)s") % {"error": exc}) from None
        _check(data)
        return data


def _too_deep() -> str:
    return _("The JSON is nested more than %(n)d deep.") % {"n": MAX_DEPTH}


def _constant(name: str) -> Any:
    raise ValueError(_("%(name)s is not a JSON number.") % {"name": name})


def _float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise ValueError(_("the number %(literal)s is too large.") % {"literal": literal[:20]})
    return value


def _int(literal: str) -> int:
    value = int(literal)
    if abs(value) > MAX_INTEGER:
        raise ValueError(
            _("the integer %(literal)s is beyond ±(2^53 − 1).") % {"literal": literal[:20]}
        )
    return value


def _check(data: Any) -> None:
    """Refuse nesting deeper than MAX_DEPTH and strings no database text can hold. Iterative:
    a recursive walk would fail on the very bodies it is there to refuse."""
    pending: list[tuple[Any, int]] = [(data, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, str):
            _check_string(value)
        elif isinstance(value, dict | list):
            if depth > MAX_DEPTH:
                raise ParseError(_too_deep())
            if isinstance(value, dict):
                for key in value:
                    _check_string(key)
            inner = value.values() if isinstance(value, dict) else value
            pending.extend((item, depth + 1) for item in inner)


def _check_string(value: str) -> None:
    found = _UNSTORABLE.search(value)
    if found is None:
        return
    if found.group() == "\x00":
        raise ParseError(_("The JSON holds a NUL character (\\u0000), which no text may hold."))
    raise ParseError(
        _("The JSON holds an unpaired surrogate (\\u%(code)04x), which is not Unicode text.")
        % {"code": ord(found.group())}
    )
