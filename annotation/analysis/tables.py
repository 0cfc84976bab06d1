"""The database's judgments of one protocol config and criterion as the numerical core's table:
database ids mapped to codes, item types from the shown outputs, QC rows linked to their
originals."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from django.contrib.auth import get_user_model
from django.db.models import (
    Case,
    IntegerField,
    QuerySet,
    Value,
    When,
)

from annotation.analysis.credits import config_credits, credited_rows
from annotation.analysis.services import annotator_pseudonyms_ensure
from annotation.models import (
    AnnotatorDecision,
    Campaign,
    ItemKind,
    JudgmentValue,
    ProtocolConfig,
    System,
    pseudonym_code,
)
from annotation.protocols import PROTOCOLS, Criterion
from evalcore.human import (
    TOLERANCE_0_TO_100,
    TOLERANCE_1_TO_5,
    ItemType,
    Judgments,
    link_originals,
)
from evalsite.db.arrays import values_array

IntArray = npt.NDArray[np.int64]

FloatArray = npt.NDArray[np.float64]


class _Code(Case):
    """A ``CASE`` whose integer result needs no per-row conversion: the database already
    returns ints, and Django's default ``int()`` converter would run once per row."""

    @property
    def convert_value(self) -> Any:
        # Django's own no-op, which get_db_converters recognises by identity; not in the stubs.
        return self._convert_value_noop  # type: ignore[attr-defined]


# ItemOutput.kind → ItemType code, computed by the database so that no Python loop maps rows.
KIND_CODE = _Code(
    When(output__kind=ItemKind.REPEAT, then=Value(int(ItemType.REPEAT))),
    When(output__kind=ItemKind.REFERENCE, then=Value(int(ItemType.REFERENCE))),
    When(output__kind=ItemKind.BAD_REFERENCE, then=Value(int(ItemType.BAD_REF))),
    default=Value(int(ItemType.REAL)),
    output_field=IntegerField(),
)

ITEM_TYPE_NAMES = {
    int(ItemType.REAL): "SYSTEM",
    int(ItemType.REPEAT): "REPEAT",
    int(ItemType.REFERENCE): "REF",
    int(ItemType.BAD_REF): "BAD_REF",
}

# Columns of the one query per (config, criterion); all numeric so that numpy takes the rows
# as they come (None becomes NaN).
_COLUMNS = (
    "id",
    "judgment__annotator_id",
    "judgment__item__segment_id",
    "output_id",
    "kind_code",
    "output__system_id",
    "output__original_id",
    "value",
    "judgment__seconds",
    "judgment_id",
)


@dataclass(frozen=True)
class CriterionTable:
    """One criterion of one protocol config as a :class:`Judgments` table, with the database
    ids behind its codes.

    Attributes:
        config: the protocol config.
        criterion: the criterion key ("adequacy", "fluency", "score", "rank", …).
        judgments: the table; row i is ``value_ids[i]``.
        value_ids: JudgmentValue id per row: ascending over the answers' rows, then the rows
            that credit merged outputs to other systems (``judgments.credit_of``), which repeat
            their answer's id.
        annotator_ids: user id per annotator code.
        segment_ids: Segment id per segment code.
        system_ids: System id per system code; when ``has_reference``, the last code stands for
            references shown as outputs and its id is -1.
        has_reference: whether some rows showed a reference as an output.
        credited_runs: the Run id of each row that credits a merged output to another system
            (the table's last rows, in order); their ``value_ids`` name the shown output's.
    """

    config: ProtocolConfig
    criterion: str
    judgments: Judgments
    value_ids: IntArray
    annotator_ids: IntArray
    segment_ids: IntArray
    system_ids: IntArray
    has_reference: bool
    credited_runs: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def definition(self) -> Criterion:
        return criterion_definition(self.config.protocol, self.criterion)


def campaign_criteria(*, campaign: Campaign) -> list[tuple[ProtocolConfig, str]]:
    """The (protocol config, criterion) pairs that hold judgments, in config order.

    Criteria come from the protocol registry (submits and imports are validated against it);
    one ``EXISTS`` query per pair, which stays fast however many judgments there are.
    """
    found: list[tuple[ProtocolConfig, str]] = []
    for config in ProtocolConfig.objects.filter(campaign=campaign).order_by("created", "pk"):
        definition = PROTOCOLS.get(config.protocol)
        if definition is None:
            continue
        keys = [c.key for c in definition.criteria]
        found.extend(
            (config, key) for key in keys if criterion_values(config=config, criterion=key).exists()
        )
    return found


def criterion_values(
    *, config: ProtocolConfig, criterion: str, annotator_id: int | None = None
) -> QuerySet[JudgmentValue]:
    """The judgment values of one criterion of one protocol config (of one annotator's
    judgments only, with ``annotator_id``)."""
    values = JudgmentValue.objects.filter(judgment__item__task__config=config, criterion=criterion)
    if annotator_id is not None:
        values = values.filter(judgment__annotator_id=annotator_id)
    return values


def criterion_table_load(
    *, config: ProtocolConfig, criterion: str, annotator_id: int | None = None
) -> CriterionTable:
    """Read one criterion of one protocol config into a :class:`CriterionTable` (one
    annotator's judgments only, with ``annotator_id``: what a crowd worker's QC runs on).

    One query (``values_list`` of numeric columns, the item type computed by the database);
    everything else is numpy over whole columns.
    """
    data = values_array(
        criterion_values(config=config, criterion=criterion, annotator_id=annotator_id)
        .annotate(kind_code=KIND_CODE)
        .order_by("id"),
        _COLUMNS,
    )
    n = data.shape[0]
    value_id = data[:, 0].astype(np.int64)
    annotator_ids, annotator = np.unique(data[:, 1].astype(np.int64), return_inverse=True)
    segment_ids, segment = np.unique(data[:, 2].astype(np.int64), return_inverse=True)
    output = data[:, 3].astype(np.int64)
    item_type = data[:, 4].astype(np.int64)
    system_raw = data[:, 5]
    original_output = data[:, 6]
    score = data[:, 7]
    seconds = data[:, 8]
    _, screen = np.unique(data[:, 9].astype(np.int64), return_inverse=True)

    # Merged outputs: one more row per credited system, after the answers' rows.
    extra = credited_rows(
        output=output, real=item_type == ItemType.REAL, credits=config_credits(config=config)
    )
    grown = [extra.grow(c) for c in (value_id, annotator, segment, output, item_type)]
    value_id, annotator, segment, output, item_type = grown
    grown = [extra.grow(c) for c in (original_output, score, seconds, screen)]
    original_output, score, seconds, screen = grown
    system_raw = np.r_[system_raw, extra.system.astype(np.float64)]
    credit_of = np.r_[np.full(n, -1, dtype=np.int64), extra.source]
    n = value_id.shape[0]

    shows_system = np.isfinite(system_raw)
    system_ids, system_code = np.unique(
        system_raw[shows_system].astype(np.int64), return_inverse=True
    )
    has_reference = bool((~shows_system).any())
    system = np.full(n, system_ids.shape[0], dtype=np.int64)
    system[shows_system] = system_code
    if has_reference:
        system_ids = np.r_[system_ids, -1]

    original = _originals(annotator, output, item_type, original_output, credit_of)

    judgments = Judgments.from_arrays(
        annotator=annotator,
        segment=segment,
        system=system,
        score=score,
        item_type=item_type,
        original=original,
        screen=screen,
        seconds=seconds,
        n_annotators=annotator_ids.shape[0],
        n_segments=segment_ids.shape[0],
        n_systems=system_ids.shape[0],
        credit_of=credit_of,
        standardised=config.scores_standardised,
    )
    return CriterionTable(
        config=config,
        criterion=criterion,
        judgments=judgments,
        value_ids=value_id,
        annotator_ids=annotator_ids.astype(np.int64),
        segment_ids=segment_ids.astype(np.int64),
        system_ids=system_ids.astype(np.int64),
        has_reference=has_reference,
        credited_runs=extra.run,
    )


def _originals(
    annotator: IntArray,
    output: IntArray,
    item_type: IntArray,
    original_output: FloatArray,
    credit_of: IntArray,
) -> IntArray:
    """``Judgments.original``: each QC row's original, the same annotator's row of the output
    its output copies."""
    n = annotator.shape[0]
    qc = (item_type == ItemType.REPEAT) | (item_type == ItemType.BAD_REF)
    wanted = np.where(qc & np.isfinite(original_output), original_output, -1).astype(np.int64)
    # Originals are looked for among the answers' rows only (a credited row is no original).
    answers = credit_of < 0
    original = np.full(n, -1, dtype=np.int64)
    linked = link_originals(
        annotator=annotator[answers], item=output[answers], original_item=wanted[answers]
    )
    original[answers] = np.where(linked >= 0, np.flatnonzero(answers)[np.maximum(linked, 0)], -1)
    # The core accepts originals only on REAL rows; anything else (a repeat of a repeat) is
    # left unlinked rather than guessed.
    target = np.maximum(original, 0)
    original = np.where((original >= 0) & (item_type[target] == ItemType.REAL), original, -1)
    return original


def criterion_definition(protocol: str, key: str) -> Criterion:
    """The protocol registry's criterion (scale, label); an unknown key gets a 0–100 scale."""
    definition = PROTOCOLS.get(protocol)
    if definition is not None:
        for criterion in definition.criteria:
            if criterion.key == key:
                return criterion
    return Criterion(key, key, 0, 100)


def repeat_tolerance(criterion: Criterion) -> float:
    """±1 on 1–5 scales, ±10 on 0–100 (DESIGN §4): the tolerance that fits the scale."""
    return TOLERANCE_0_TO_100 if criterion.maximum - criterion.minimum > 10 else TOLERANCE_1_TO_5


def system_name(table: CriterionTable, code: int, names: Names) -> str:
    system_id = int(table.system_ids[code])
    return "(reference)" if system_id < 0 else names.systems.get(system_id, str(system_id))


def system_codes(table: CriterionTable) -> list[int]:
    """System codes that stand for systems (the reference code, if any, is last and left out:
    references shown as outputs are QC items and never enter system scores)."""
    n = table.system_ids.shape[0] - (1 if table.has_reference else 0)
    return list(range(n))


def system_positions(order: IntArray, n_systems: int) -> IntArray:
    position = np.zeros(n_systems, dtype=np.int64)
    position[order] = np.arange(1, order.shape[0] + 1)
    return position


@dataclass(frozen=True)
class Names:
    """Display names of the ids in a set of tables, read once."""

    usernames: dict[int, str]
    pseudonyms: dict[int, str]
    systems: dict[int, str]
    decisions: dict[int, AnnotatorDecision]


def campaign_names(campaign: Campaign, tables: list[CriterionTable]) -> Names:
    annotators = {int(a) for t in tables for a in t.annotator_ids}
    systems = {int(s) for t in tables for s in t.system_ids if s >= 0}
    user_model = get_user_model()
    usernames = dict(
        user_model.objects.filter(pk__in=annotators).values_list("pk", user_model.USERNAME_FIELD)
    )
    # Numbered here, after their judgments were read: an annotator whose first judgment landed
    # after the caller's numbering would otherwise have none.
    numbers = annotator_pseudonyms_ensure(campaign=campaign, judged=annotators)
    pseudonyms = {annotator: pseudonym_code(numbers[annotator]) for annotator in annotators}
    return Names(
        usernames=usernames,
        pseudonyms=pseudonyms,
        systems=dict(System.objects.filter(pk__in=systems).values_list("pk", "name")),
        decisions={
            d.annotator_id: d
            for d in AnnotatorDecision.objects.filter(
                campaign=campaign, annotator_id__in=annotators
            )
        },
    )
