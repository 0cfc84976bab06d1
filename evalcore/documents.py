"""Typed JSON documents: dataclasses written as plain JSON and read back by their type hints.

Reading refuses a missing key, an unknown key and a value of another type with a ValueError
that names where (``metrics[2].systems[0].mean``), so a stored result is read whole or not at
all; writing refuses NaN and infinities (JSON has none). A top-level document sets ``SCHEMA``:
its JSON then starts with ``"schema"``, a document without that key reads as schema 1, an older
schema is brought to today's layout by the class's ``upgraded``, and a newer one is refused.

Field types: ``str``, ``int``, ``float`` (an integer in the JSON reads as a float), ``bool``,
``Literal``, unions with ``None``, ``list[X]``, ``dict[str, X]``, ``Any`` (taken as it is) and
nested document dataclasses. A field's JSON key is its name, or ``metadata={"key": ...}`` (for a
key such as ``from``); a field with ``metadata={"omit_none": True}`` is left out when it is None
and reads as None when it is absent.
"""

from __future__ import annotations

import dataclasses
import math
import types
from collections.abc import Mapping
from functools import cache
from typing import Any, ClassVar, Literal, Self, Union, get_args, get_origin, get_type_hints

OMIT_NONE: Mapping[str, Any] = types.MappingProxyType({"omit_none": True})
"""``field(default=None, metadata=OMIT_NONE)``: a key that is absent rather than null."""


class JsonDocument:
    """Base of a document dataclass: :meth:`to_json` and :meth:`from_json`."""

    SCHEMA: ClassVar[int | None] = None
    """The layout's version, for a top-level document; raise it when a key changes meaning or
    disappears."""

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types, ``"schema"`` first when the class has one."""
        body: dict[str, Any] = _write(self, type(self).__name__)
        return body if self.SCHEMA is None else {"schema": self.SCHEMA, **body}

    @classmethod
    def from_json(cls, doc: Any, path: str = "") -> Self:
        """The document ``doc`` describes; a ValueError names the first key that does not fit."""
        where = path or cls.__name__
        if cls.SCHEMA is not None:
            schema = schema_of(doc, cls.SCHEMA, where)
            doc = cls.upgraded({k: v for k, v in doc.items() if k != "schema"}, schema)
        read: Self = _read(cls, doc, where)
        return read

    @classmethod
    def upgraded(cls, doc: dict[str, Any], schema: int) -> dict[str, Any]:
        """``doc``, stored under the older ``schema``, in today's layout (a top-level document
        whose layout changed overrides this; the default reads every schema as it is)."""
        return doc


def schema_of(doc: Any, version: int, path: str) -> int:
    """The schema of a stored document (1 when it has none, as before the key existed); a
    ValueError when it is not a JSON object or its schema is unknown or newer than ``version``."""
    if not isinstance(doc, Mapping):
        raise ValueError(f"{path}: expected a JSON object, not {type(doc).__name__}")
    schema = doc.get("schema", 1)
    if isinstance(schema, bool) or not isinstance(schema, int) or schema < 1:
        raise ValueError(f"{path}: unknown 'schema' {schema!r}")
    if schema > version:
        raise ValueError(
            f"{path}: 'schema' {schema} is newer than this code reads ({version}); "
            "update EvalSite or compute the analysis again"
        )
    return schema


def _key(f: dataclasses.Field[Any]) -> str:
    return str(f.metadata.get("key", f.name))


@cache
def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def _write(value: Any, path: str) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if item is None and f.metadata.get("omit_none"):
                continue
            out[_key(f)] = _write(item, f"{path}.{_key(f)}")
        return out
    if isinstance(value, list | tuple):
        return [_write(item, f"{path}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, Mapping):
        return {str(k): _write(item, f"{path}.{k}") for k, item in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{path}: {value} is not a JSON number (store None for a missing value)")
    return value


def _read(kind: Any, value: Any, path: str) -> Any:
    origin = get_origin(kind)
    if kind is Any:
        return value
    if origin in (Union, types.UnionType):
        return _read_union(get_args(kind), value, path)
    if origin is list:
        if not isinstance(value, list):
            raise ValueError(f"{path}: expected a list, not {type(value).__name__}")
        (item,) = get_args(kind)
        return [_read(item, v, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, Mapping):
            raise ValueError(f"{path}: expected a JSON object, not {type(value).__name__}")
        _, item = get_args(kind)
        return {str(k): _read(item, v, f"{path}.{k}") for k, v in value.items()}
    if origin is Literal:
        if value not in get_args(kind):
            raise ValueError(f"{path}: {value!r} is not one of {list(get_args(kind))}")
        return value
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _read_record(kind, value, path)
    return _read_scalar(kind, value, path)


def _read_union(options: tuple[Any, ...], value: Any, path: str) -> Any:
    if value is None:
        if type(None) in options:
            return None
        raise ValueError(f"{path}: missing value (null)")
    others = [o for o in options if o is not type(None)]
    if len(others) == 1:
        return _read(others[0], value, path)
    problems = []
    for option in others:
        try:
            return _read(option, value, path)
        except ValueError as exc:
            problems.append(str(exc))
    raise ValueError("; ".join(problems))


def _read_record(kind: type, value: Any, path: str) -> Any:
    if not isinstance(value, Mapping):
        raise ValueError(f"{path}: expected a JSON object, not {type(value).__name__}")
    known = {_key(f): f for f in dataclasses.fields(kind)}
    missing = [
        key
        for key, f in known.items()
        if key not in value
        and f.default is dataclasses.MISSING
        and f.default_factory is dataclasses.MISSING
        and not f.metadata.get("omit_none")
    ]
    unknown = [str(key) for key in value if key not in known]
    if missing or unknown:
        problems = [f"missing key {k!r}" for k in missing] + [f"unknown key {k!r}" for k in unknown]
        raise ValueError(f"{path}: {'; '.join(problems)}")
    hints = _hints(kind)
    values = {
        f.name: _read(hints[f.name], value[key], f"{path}.{key}")
        for key, f in known.items()
        if key in value
    }
    return kind(**values)


def _read_scalar(kind: Any, value: Any, path: str) -> Any:
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{path}: expected a number, not {type(value).__name__}")
        return float(value)
    if kind is int or kind is str or kind is bool:
        if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
            return value
        raise ValueError(f"{path}: expected {kind.__name__}, not {type(value).__name__}")
    raise TypeError(f"{path}: a document field cannot have the type {kind!r}")
