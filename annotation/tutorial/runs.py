"""An annotator's way through a protocol's tutorial: the item to show, an answer recorded with
its verdict and feedback, the rule applied after the last item, and the gate that keeps the real
items closed until the tutorial lets the annotator through.

An annotator takes a protocol's tutorial once, before the first real item of whichever of its
tasks they hold; passed (or failed under a rule that lets them continue), every task of the
protocol starts at its real items. Stopped, they get no real item of the protocol.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.judging.gates import Gate
from annotation.judging.screens import JudgmentError
from annotation.models import (
    Assignment,
    ProtocolConfig,
    TutorialAnswer,
    TutorialItem,
    TutorialRule,
    TutorialRun,
)
from annotation.protocols import Protocol
from annotation.tasking.services import assignment_release
from annotation.tutorial.expectations import CHECK, Spans, Values, check_met, expectation_met


class TutorialError(JudgmentError):
    """A tutorial request that cannot be served, or a real item refused because of the
    tutorial; ``status`` is the HTTP status to answer."""


def tutorial_items(*, config: ProtocolConfig) -> list[TutorialItem]:
    """The tutorial in the order it is shown (the attention check last)."""
    return list(TutorialItem.objects.filter(config=config).order_by("position"))


def stop_message(rule: TutorialRule | None) -> str:
    """What an annotator who is stopped reads."""
    if rule is not None and rule.stop_message.strip():
        return rule.stop_message
    return _(
        "You did not pass the tutorial, so this protocol has no items for you. Thank you for "
        "your time."
    )


def tutorial_blocking(*, config: ProtocolConfig, annotator: User) -> TutorialRun | None:
    """The annotator's run when it keeps the real items of ``config`` closed (not finished, or
    stopped), with an unsaved run for one who has not started; None when they may go on. No
    query for a config without a tutorial."""
    if not config.has_tutorial:
        return None
    run = TutorialRun.objects.filter(config=config, annotator=annotator).first()
    if run is None:
        return TutorialRun(config=config, annotator=annotator)
    return None if run.may_continue else run


def tutorial_stopped(*, assignment_id: uuid.UUID, annotator: User) -> bool:
    """Whether the annotator was stopped by the tutorial of the protocol of this task."""
    return TutorialRun.objects.filter(
        config__tasks__assignments__id=assignment_id,
        annotator=annotator,
        status=TutorialRun.Status.STOPPED,
    ).exists()


def _release_held(run: TutorialRun) -> None:
    """A stopped annotator's unfinished tasks of the protocol go back to the pool."""
    for held in Assignment.objects.filter(
        task__config=run.config, annotator=run.annotator, status=Assignment.Status.ACTIVE
    ):
        assignment_release(assignment=held)


def tutorial_refusal(*, config: ProtocolConfig, annotator: User) -> TutorialError | None:
    """Why a real item of ``config`` is refused to the annotator (409: the tutorial comes
    first, or they failed it and may not continue); None when nothing stands in the way."""
    run = tutorial_blocking(config=config, annotator=annotator)
    if run is None:
        return None
    if run.status == TutorialRun.Status.STOPPED:
        rule = TutorialRule.objects.filter(config=config).first()
        return TutorialError("tutorial_stopped", stop_message(rule), 409)
    return TutorialError(
        "tutorial",
        _("Take this protocol's tutorial first (GET …/tutorial/ of this task)."),
        409,
    )


class TutorialGate(Gate):
    """The tutorial as the annotator's pages ask it (``annotation.judging.gates``): it refuses
    the real items until it lets the annotator through, and its page stands in for theirs."""

    key = "tutorial"

    def refusal(self, *, config: ProtocolConfig, annotator: User) -> TutorialError | None:
        return tutorial_refusal(config=config, annotator=annotator)

    def page(self, *, assignment: Assignment, annotator: User) -> str | None:
        if tutorial_blocking(config=assignment.task.config, annotator=annotator) is None:
            return None
        return reverse("tutorial", args=[assignment.pk])

    def released_page(self, *, assignment_id: uuid.UUID, annotator: User) -> str | None:
        # Stopped by the tutorial (the task went back to the pool): its page says why.
        if not tutorial_stopped(assignment_id=assignment_id, annotator=annotator):
            return None
        return reverse("tutorial", args=[assignment_id])


@dataclass(frozen=True)
class ShownOutput:
    """An output of a tutorial screen, as the kinds' screen templates read one."""

    pk: int
    text: str


@dataclass
class TutorialScreen:
    """A tutorial item as the annotation page's screen parts show it (``outputs``,
    ``protocol``, ``segments``), or the message of a stopped annotator (``item`` None)."""

    assignment: Assignment
    run: TutorialRun
    protocol: Protocol
    item: TutorialItem | None
    position: int
    total: int
    shows_source: bool
    shows_reference: bool
    message: str = ""
    # As the annotation page's data reads a screen: a tutorial item is never revised.
    revision: int = 0
    answer: None = None

    @property
    def outputs(self) -> list[ShownOutput]:
        if self.item is None:
            return []
        return [ShownOutput(n, t) for n, t in enumerate(self.item.outputs, start=1)]

    # The screen parts ask for a document screen's segments and its document-level score: a
    # tutorial item is one segment's screen, on a document-screen protocol too, and asks none.
    segments: tuple[()] = ()
    document_score: None = None


def tutorial_screen(*, assignment: Assignment, annotator: User) -> TutorialScreen:
    """The tutorial item an annotator is at (``item`` None and ``message`` set when stopped);
    TutorialError when the tutorial does not stand in the way of the real items."""
    config = assignment.task.config
    run = tutorial_blocking(config=config, annotator=annotator)
    if run is None:
        raise TutorialError("done", _("You have finished the tutorial."), 410)
    protocol = config.definition
    mode = protocol.mode(config.mode)
    items = tutorial_items(config=config)
    if (
        run.pk is not None
        and run.status == TutorialRun.Status.ACTIVE
        and run.items_done >= len(items)
    ):
        # The organizer removed items since this run's last answer: it ends on what it has.
        with transaction.atomic():
            _finish(run, assignment, len(items))
            run.save()
        if run.may_continue:
            raise TutorialError("done", _("You have finished the tutorial."), 410)
    common: dict[str, Any] = {
        "assignment": assignment,
        "run": run,
        "protocol": protocol,
        "total": len(items),
        "shows_source": mode.shows_source,
        "shows_reference": mode.shows_reference,
    }
    if run.status == TutorialRun.Status.STOPPED:
        # A task taken again after the stop is given back at once.
        _release_held(run)
        rule = TutorialRule.objects.filter(config=config).first()
        return TutorialScreen(item=None, position=len(items), message=stop_message(rule), **common)
    position = min(run.items_done, len(items) - 1)
    return TutorialScreen(item=items[position], position=position, **common)


@dataclass(frozen=True)
class TutorialOutcome:
    """A recorded tutorial answer: its verdict, the organizer's feedback, where the annotator
    goes next (``status``: the run's, and ``retry`` when the tutorial starts again) and what
    they read about it (``summary``)."""

    answer: TutorialAnswer
    feedback: str
    status: str
    summary: str
    done: int
    total: int


def _values(stored: Mapping[str, Mapping[str, Any]]) -> Values:
    return {
        (int(o), c): float(v)
        for o, given in stored.items()
        for c, v in given.items()
        if isinstance(v, int | float) and not isinstance(v, bool)
    }


def _spans(protocol: Protocol, stored: Mapping[str, Mapping[str, Any]]) -> Spans:
    spans: dict[int, list[tuple[int, int, str, str]]] = defaultdict(list)
    for output, start, end, _length, severity, category in protocol.span_rows(stored):
        spans[output].append((start, end, severity, category))
    return spans


def tutorial_answer_record(
    *,
    assignment: Assignment,
    annotator: User,
    item_id: int,
    submission_id: uuid.UUID,
    answer: Mapping[str, Any],
) -> TutorialOutcome:
    """Check an answer to the current tutorial item with the kind's own validation, decide
    whether it meets the item's expectation, store it, and after the last item apply the
    rule. A resent submit (same ``submission_id``) is answered as it was first."""
    config = assignment.task.config
    if not config.has_tutorial:
        raise TutorialError("not_current", _("This protocol has no tutorial."), 409)
    with transaction.atomic():
        run, _created = TutorialRun.objects.select_for_update().get_or_create(
            config=config, annotator=annotator
        )
        items = tutorial_items(config=config)
        earlier = TutorialAnswer.objects.filter(run=run, submission_id=submission_id).first()
        if earlier is not None:
            return _outcome(run, earlier, items, config)
        if run.status != TutorialRun.Status.ACTIVE or not items:
            raise TutorialError("not_current", _("The tutorial takes no more answers."), 409)
        if run.items_done >= len(items):
            raise TutorialError("not_current", _("The tutorial has changed; open it again."), 409)
        item = items[run.items_done]
        if item.pk != item_id:
            raise TutorialError(
                "not_current", _("This tutorial item is no longer the current one."), 409
            )
        protocol = config.definition
        ids = list(range(1, len(item.outputs) + 1))
        values, errors = protocol.validate(
            answer, ids, texts=dict(zip(ids, item.outputs, strict=True))
        )
        if errors:
            raise TutorialError("invalid", errors[0], 400, errors)
        stored = protocol.stored_answer(values, ids, answer)
        verdict = _verdict(protocol, item, run, stored)
        row = TutorialAnswer.objects.create(
            run=run,
            item=item,
            attempt=run.attempt,
            position=item.position,
            submission_id=submission_id,
            answer=stored,
            met=verdict.met,
            notes=verdict.notes,
        )
        run.items_done += 1
        run.items_met += int(verdict.met)
        finished = run.items_done >= len(items)
        if finished:
            _finish(run, assignment, len(items))
        run.save()
        return _outcome(run, row, items, config)


def _verdict(protocol: Protocol, item: TutorialItem, run: TutorialRun, stored: Any) -> Any:
    values, spans = _values(stored), _spans(protocol, stored)
    if item.is_check:
        original = TutorialAnswer.objects.filter(
            run=run, attempt=run.attempt, item_id=item.original_id
        ).first()
        return check_met(
            protocol,
            item.expectation[CHECK],
            item.outputs,
            values,
            spans,
            None if original is None else _values(original.answer),
        )
    return expectation_met(protocol, item.expectation, item.outputs, values, spans)


def _rule(config: ProtocolConfig) -> TutorialRule:
    return TutorialRule.objects.filter(config=config).first() or TutorialRule(config=config)


def needed(rule: TutorialRule, total: int) -> int:
    """How many items an annotator must meet to pass a tutorial of ``total`` items."""
    return total if rule.pass_at_least is None else min(rule.pass_at_least, total)


def _finish(run: TutorialRun, assignment: Assignment, total: int) -> None:
    """The rule after the last item: pass, continue, start again, or stop (the stopped
    annotator's unfinished tasks of the protocol go back to the pool)."""
    rule = _rule(run.config)
    now = timezone.now()
    if run.items_met >= needed(rule, total):
        run.status = TutorialRun.Status.PASSED
    elif rule.on_fail == TutorialRule.OnFail.CONTINUE:
        run.status = TutorialRun.Status.CONTINUED
    elif rule.on_fail == TutorialRule.OnFail.RETRY and run.attempt < rule.attempts:
        run.attempt += 1
        run.items_done = run.items_met = 0
        return
    else:
        run.status = TutorialRun.Status.STOPPED
        run.finished = now
        _release_held(run)
        return
    run.finished = now
    # The first real item's clock starts when it is shown after the tutorial, not before.
    Assignment.objects.filter(pk=assignment.pk).update(shown_item=None, shown_at=None)


def _outcome(
    run: TutorialRun,
    row: TutorialAnswer,
    items: list[TutorialItem],
    config: ProtocolConfig,
) -> TutorialOutcome:
    item = row.item
    feedback = item.feedback if item is not None else ""
    status = run.status
    summary = ""
    total = len(items)
    rule = _rule(config)
    counts = {"met": run.items_met, "total": total, "needed": needed(rule, total)}
    if row.attempt < run.attempt:
        status = "retry"
        summary = _(
            "You did not answer enough tutorial items as expected. The tutorial starts again "
            "(attempt %(n)d of %(of)d)."
        ) % {"n": run.attempt, "of": rule.attempts}
    elif status == TutorialRun.Status.PASSED:
        summary = _("You passed the tutorial: %(met)d of %(total)d as expected.") % counts
    elif status == TutorialRun.Status.CONTINUED:
        summary = (
            _(
                "You answered %(met)d of %(total)d tutorial items as expected (%(needed)d needed). "
                "You may continue to the real items; please keep the feedback in mind."
            )
            % counts
        )
    elif status == TutorialRun.Status.STOPPED:
        summary = stop_message(rule)
    done = run.items_done if status == TutorialRun.Status.ACTIVE else total
    return TutorialOutcome(row, feedback, status, summary, done, total)
