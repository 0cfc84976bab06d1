"""The registry of protocol kinds: the package registers its kinds here when it is imported
(``annotation/protocols/__init__.py``), and the rest of the code finds a kind by its key."""

from __future__ import annotations

from annotation.protocols.base import Protocol

PROTOCOLS: dict[str, Protocol] = {}


def register(protocol: Protocol) -> Protocol:
    """Add a protocol kind under its key; a key is registered once."""
    if protocol.key in PROTOCOLS:
        raise ValueError(f"a protocol kind {protocol.key!r} is registered already")
    PROTOCOLS[protocol.key] = protocol
    return protocol
