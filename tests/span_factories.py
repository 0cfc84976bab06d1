"""A campaign with error spans for the span-statistics tests: five systems with merged
identical outputs, one ESA or MQM config with bad references and repeats, and 3–4 annotators
who mark random spans, one of whom fails QC."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np

from annotation.judging.services import judgment_record
from annotation.models import Item, ItemKind, ItemOutput
from annotation.tasking.services import task_assign_next
from tests.factories import make_config, make_user
from tests.merge_factories import make_merge_campaign

CATEGORIES = ("accuracy/mistranslation", "fluency/grammar", "style", "terminology")


def _spans(rng: np.random.Generator, text: str, n: int, mqm: bool) -> list[dict[str, Any]]:
    """Up to ``n`` random spans inside ``text`` that do not overlap (bounds drawn without
    repeats and paired in order)."""
    n = min(n, (len(text) + 1) // 2)
    bounds = sorted(rng.choice(len(text) + 1, size=2 * n, replace=False).tolist())
    spans = []
    for start, end in zip(bounds[::2], bounds[1::2], strict=True):
        severity = str(rng.choice(["minor", "major"]))
        span = {"start": int(start), "end": int(end), "severity": severity}
        if mqm:
            span["category"] = str(rng.choice(CATEGORIES))
        spans.append(span)
    return spans


def _answer(
    rng: np.random.Generator, output: ItemOutput, protocol: str, careless: bool
) -> dict[str, Any]:
    """A careful annotator scores (ESA) or marks (MQM) bad references far worse than system
    outputs; a careless one the other way round, so that QC leaves them out."""
    mqm = protocol == "mqm"
    bad = output.kind == ItemKind.BAD_REFERENCE
    if careless:
        n = 0 if bad else int(rng.integers(2, 5))
        score = int(rng.integers(90, 101)) if bad else int(rng.integers(0, 50))
    else:
        n = 3 if bad else int(rng.integers(0, 3))
        score = int(rng.integers(0, 10)) if bad else int(rng.integers(50, 101))
    answer: dict[str, Any] = {"spans": _spans(rng, output.text, n, mqm)}
    if not mqm:
        answer["score"] = score
    return answer


def generated_span_campaign(seed: int, protocol: str) -> tuple[Any, Any, Any]:
    """A campaign of five systems, merged identical outputs, one ``protocol`` config with bad
    references and repeats, judged by 3–4 annotators of whom one fails QC: (owner, campaign,
    config)."""
    rng = np.random.default_rng(seed)
    owner = make_user(f"owner{seed}", organizer=True)
    campaign = make_merge_campaign(owner=owner)
    n_annotators = int(rng.integers(3, 5))
    config = make_config(
        campaign,
        protocol,
        merge_identical=True,
        items_per_task=100,
        outputs_per_screen=1,
        annotations_per_task=n_annotators,
        qc_bad_reference=40,
        qc_repeat=20,
    )
    careless = int(rng.integers(0, n_annotators))
    for n in range(n_annotators):
        annotator = make_user(f"rater{seed}-{n}")
        assignment = task_assign_next(config=config, annotator=annotator)
        assert assignment is not None
        for item in Item.objects.filter(task=assignment.task).order_by("position"):
            answer = {
                str(o.pk): _answer(rng, o, protocol, careless=n == careless)
                for o in item.outputs.all()
            }
            judgment_record(
                assignment_id=assignment.pk,
                annotator=annotator,
                item_id=item.pk,
                revision_seen=0,
                submission_id=uuid.uuid4(),
                answer=answer,
            )
    return owner, campaign, config
