"""What the annotation and tutorial pages tell an annotator about a protocol: the kind's own
instructions and definitions (its severities, its typology), always, and the organizer's
instructions in addition. An organizer's words add to a kind's guidelines; they never take the
definitions of minor and major off the page."""

from __future__ import annotations

from dataclasses import dataclass

from annotation.protocols.base import Glossary, Protocol


@dataclass(frozen=True)
class Guidance:
    """The kind's instructions and glossaries, and the organizer's text ("" when none)."""

    instructions: str
    glossaries: tuple[Glossary, ...]
    organizer: str


def protocol_guidance(*, protocol: Protocol, organizer: str) -> Guidance:
    """The guidance a config of ``protocol`` gives, ``organizer`` being its instructions."""
    return Guidance(
        instructions=str(protocol.instructions),
        glossaries=protocol.glossaries(),
        organizer=organizer.strip(),
    )
