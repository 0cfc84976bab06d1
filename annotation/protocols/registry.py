"""The registry of protocol kinds: the package registers its kinds here when it is imported
(``annotation/protocols/__init__.py``), and the rest of the code finds a kind by its key."""

from __future__ import annotations

from typing import Any

from annotation.protocols.base import Protocol

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
