"""Gates: stages an annotator goes through before a protocol's real items (the tutorial,
``annotation.tutorial.runs.TutorialGate``, is the one there is).

A package that keeps a gate builds on the annotation screen, so the screen cannot import it:
the package's gate is registered here when Django starts (``gate_register`` in
``AnnotationConfig.ready``), and the annotation page and its API ask every registered gate.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from django.contrib.auth.models import User

from annotation.judging.screens import JudgmentError
from annotation.models import Assignment, ItemOutput, ProtocolConfig


class Gate:
    """The hooks a gate fills (each answers None where the gate does not stand). The screen asks
    them on every item: a gate answers without a query for a protocol that does not have it."""

    # The gate's name in the registry: registering a gate of the same key replaces it.
    key = ""

    def refusal(self, *, config: ProtocolConfig, annotator: User) -> JudgmentError | None:
        """Why a real item of ``config`` is refused to the annotator (the API answers with it),
        or None."""
        return None

    def page(self, *, assignment: Assignment, annotator: User) -> str | None:
        """The page (a URL) that the annotation page of ``assignment`` sends the annotator to
        instead of its item, or None."""
        return None

    def released_page(self, *, assignment_id: uuid.UUID, annotator: User) -> str | None:
        """The page of a task whose hold the gate ended (it went back to the pool, so the
        annotation page cannot show it), or None: the annotation page then sends the annotator
        to My tasks."""
        return None


_gates: dict[str, Gate] = {}


def gate_register(gate: Gate) -> None:
    """Add ``gate`` to the ones the annotator's pages ask (a gate of the same key is replaced:
    Django may start the app more than once in a process)."""
    _gates[gate.key] = gate


def gate_check(*, config: ProtocolConfig, annotator: User) -> None:
    """Raise the first gate's refusal of a real item of ``config`` to the annotator, if any."""
    for gate in _gates.values():
        refusal = gate.refusal(config=config, annotator=annotator)
        if refusal is not None:
            raise refusal


def gate_check_submission(*, shown: Sequence[ItemOutput], annotator: User) -> None:
    """:func:`gate_check` for a submit's shown outputs (with their item, task and config; none
    when the item is not the annotator's, which the submit then answers)."""
    if shown:
        gate_check(config=shown[0].item.task.config, annotator=annotator)


def gate_page(*, assignment: Assignment, annotator: User) -> str | None:
    """The first gate's page for the annotation page of ``assignment``, or None."""
    for gate in _gates.values():
        page = gate.page(assignment=assignment, annotator=annotator)
        if page is not None:
            return page
    return None


def gate_released_page(*, assignment_id: uuid.UUID, annotator: User) -> str | None:
    """The page of the gate that ended the hold on this task, or None."""
    for gate in _gates.values():
        page = gate.released_page(assignment_id=assignment_id, annotator=annotator)
        if page is not None:
            return page
    return None
