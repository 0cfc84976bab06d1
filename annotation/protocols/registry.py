"""The registry of protocol kinds: the package registers its kinds here when it is imported
(``annotation/protocols/__init__.py``), and the rest of the code finds a kind by its key."""

from __future__ import annotations

from typing import Any

from annotation.protocols.base import AnswerPart, Protocol

PROTOCOLS: dict[str, Protocol] = {}


def protocol_choices() -> list[tuple[str, Any]]:
    """The registered kinds as choices (key, name), read when a form or a check asks: the
    choices of ``ProtocolConfig.protocol``, so that a migration names this function and a new
    kind needs none."""
    return [(p.key, p.name) for p in PROTOCOLS.values()]


def register(protocol: Protocol) -> Protocol:
    """Add a protocol kind under its key; a key is registered once."""
    if protocol.key in PROTOCOLS:
        raise ValueError(f"a protocol kind {protocol.key!r} is registered already")
    known = answer_parts()
    for part in protocol.answer_parts:
        if part.key in known and known[part.key] != part:
            raise ValueError(
                f"the answer part {part.key!r} of kind {protocol.key!r} differs from the one "
                "another kind registered under that key"
            )
    PROTOCOLS[protocol.key] = protocol
    return protocol


def criterion_label_shown(protocol: str, key: str, stored: str) -> str:
    """A criterion's label in the page's language: stored results keep the label of the
    language they were computed in, a page names the criterion by its key (``stored`` when the
    kind or key is not known here)."""
    kind = PROTOCOLS.get(protocol)
    if kind is not None:
        for criterion in kind.import_criteria():
            if criterion.key == key:
                return str(criterion.label)
    return stored


def answer_parts() -> dict[str, AnswerPart]:
    """The answer parts of the registered kinds by key (read by the submit, which takes a
    part's value as sent and every other value as a number)."""
    return {part.key: part for p in PROTOCOLS.values() for part in p.answer_parts}
