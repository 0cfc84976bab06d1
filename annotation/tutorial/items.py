"""An organizer's tutorial items and rule (services): add, replace from a file, remove, set the
rule; and the attention check, a degraded copy of a tutorial item kept at the tutorial's end."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from django.db import transaction
from django.utils.translation import gettext as _

from annotation.models import ProtocolConfig, Reference, TutorialItem, TutorialRule
from annotation.tasking.plan import is_character_based, make_bad_reference
from annotation.tutorial.expectations import CHECK, expectation_problems
from evalcore.human.spans import degraded_range

# The most items one tutorial may have (a tutorial is a short warm-up, not a task).
MAX_ITEMS = 50
# Campaign references an attention check may take its phrase from.
DONOR_REFERENCES = 200


class TutorialItemError(ValueError):
    """Tutorial items that cannot be saved; ``problems`` names each, by item number."""

    def __init__(self, problems: list[str]):
        super().__init__(problems[0] if problems else "")
        self.problems = problems


def tutorial_item_problems(*, config: ProtocolConfig, data: Mapping[str, Any]) -> list[str]:
    """What is wrong with one item as a form, file or the API gives it: ``source``,
    ``reference``, ``outputs`` (a list of texts), ``expectation`` and ``feedback``."""
    protocol = config.definition
    mode = protocol.mode(config.mode)
    outputs = data.get("outputs")
    if not (
        isinstance(outputs, list)
        and outputs
        and all(isinstance(o, str) and o.strip() for o in outputs)
    ):
        return [_("Give at least one output text.")]
    problems = []
    most = protocol.max_outputs or 20
    if protocol.single_output and len(outputs) != 1:
        problems.append(_("This protocol shows one output per screen."))
    elif len(outputs) > most:
        problems.append(_("At most %(n)d outputs per screen.") % {"n": most})
    if mode.shows_source and not str(data.get("source") or "").strip():
        problems.append(_("This protocol shows the source: give one."))
    if mode.shows_reference and not str(data.get("reference") or "").strip():
        problems.append(_("This protocol shows a reference: give one."))
    if problems:
        return problems
    return expectation_problems(protocol, data.get("expectation"), outputs)


def _checked(config: ProtocolConfig, items: Sequence[Mapping[str, Any]]) -> None:
    problems = []
    for number, data in enumerate(items, start=1):
        problems += [
            _("Item %(n)d: %(problem)s") % {"n": number, "problem": p}
            for p in tutorial_item_problems(config=config, data=data)
        ]
    if problems:
        raise TutorialItemError(problems)


def _row(config: ProtocolConfig, position: int, data: Mapping[str, Any]) -> TutorialItem:
    return TutorialItem(
        config=config,
        position=position,
        source=str(data.get("source") or ""),
        reference=str(data.get("reference") or ""),
        outputs=list(data["outputs"]),
        expectation=dict(data["expectation"]),
        feedback=str(data.get("feedback") or ""),
    )


@transaction.atomic
def tutorial_items_add(
    *, config: ProtocolConfig, items: Sequence[Mapping[str, Any]], replace: bool = False
) -> list[TutorialItem]:
    """Add items after the tutorial's (or, with ``replace``, instead of them): all or none,
    each checked against the config's protocol and mode. Answers already given stay (their
    item then reads as removed)."""
    _checked(config, items)
    kept = (
        []
        if replace
        else list(
            TutorialItem.objects.filter(config=config, original__isnull=True).order_by("position")
        )
    )
    if len(kept) + len(items) > MAX_ITEMS:
        raise TutorialItemError([_("A tutorial has at most %(n)d items.") % {"n": MAX_ITEMS}])
    if replace:
        TutorialItem.objects.filter(config=config).delete()
    else:
        TutorialItem.objects.filter(config=config, original__isnull=False).delete()
    created = TutorialItem.objects.bulk_create(
        [_row(config, len(kept) + i, data) for i, data in enumerate(items)]
    )
    tutorial_refresh(config=config)
    return created


@transaction.atomic
def tutorial_item_remove(*, item: TutorialItem) -> None:
    """Remove an organizer's item (its attention check goes with it and is made again)."""
    config = item.config
    item.delete()
    tutorial_refresh(config=config)


@transaction.atomic
def tutorial_rule_save(*, config: ProtocolConfig, **fields: Any) -> TutorialRule:
    """Set the config's tutorial rule (the fields of :class:`TutorialRule`)."""
    rule, _created = TutorialRule.objects.update_or_create(config=config, defaults=fields)
    tutorial_refresh(config=config)
    return rule


def tutorial_refresh(*, config: ProtocolConfig) -> None:
    """Number the organizer's items from 0, make the attention check again after them (when
    the rule asks for one and an item can be degraded) and note on the config whether it has a
    tutorial."""
    TutorialItem.objects.filter(config=config, original__isnull=False).delete()
    items = list(TutorialItem.objects.filter(config=config).order_by("position"))
    # Two passes: positions are unique, so move them out of the way first.
    for item in items:
        item.position += MAX_ITEMS + 1
    TutorialItem.objects.bulk_update(items, ["position"])
    for position, item in enumerate(items):
        item.position = position
    TutorialItem.objects.bulk_update(items, ["position"])
    rule = TutorialRule.objects.filter(config=config).first()
    if rule is not None and rule.attention_check and items:
        check = _attention_check(config, items)
        if check is not None:
            check.save()
    ProtocolConfig.objects.filter(pk=config.pk).update(has_tutorial=bool(items))
    config.has_tutorial = bool(items)


def _attention_check(config: ProtocolConfig, items: list[TutorialItem]) -> TutorialItem | None:
    """A bad-reference copy of the first item whose outputs have words, placed last: the
    outputs the kind degrades get a phrase from another text (the other items' texts and the
    campaign's references), as a task's bad-reference items do."""
    character_based = is_character_based(config.campaign.target_language)
    for original in items:
        if not all(text.split() for text in original.outputs):
            continue
        donors = [
            t
            for other in items
            if other.pk != original.pk
            for t in (other.reference, *other.outputs)
            if t.strip()
        ] + list(
            Reference.objects.filter(segment__campaign=config.campaign, index=0)
            .order_by("segment__position")
            .values_list("text", flat=True)[:DONOR_REFERENCES]
        )
        donors = [d for d in donors if d.strip() and d not in original.outputs]
        if not donors:
            return None
        rng = np.random.default_rng([config.seed, original.pk])
        n = len(original.outputs)
        damaged = sorted(config.definition.degraded_positions(n, rng))
        outputs = list(original.outputs)
        ranges = {}
        for position in damaged:
            bad = make_bad_reference(
                outputs[position],
                segment=-1,
                references=donors,
                rng=rng,
                character_based=character_based,
            )
            ranges[str(position + 1)] = list(
                degraded_range(outputs[position], bad.text, whole_words=not character_based)
            )
            outputs[position] = bad.text
        return TutorialItem(
            config=config,
            position=len(items),
            source=original.source,
            reference=original.reference,
            outputs=outputs,
            expectation={CHECK: ranges},
            original=original,
        )
    return None
