"""Import of historical judgments onto a campaign that already holds the texts.

Three layouts are read into one list of :class:`ImportRow` (see ``docs/reports.md`` for every
column and the sources of the Appraise and WMT layouts):

1. ``evalsite``: our own TSV or CSV table with a header row: ``annotator``, ``system``,
   ``segment`` (``doc_id:seg_id`` or a 1-based line number), ``type`` (SYSTEM, REPEAT, REF,
   BAD_REF), ``score``, and optionally ``hit``, ``item``, ``seconds``, ``criterion``, ``run``;
2. ``appraise``: the CSV that Appraise's ``ExportSystemScoresToCSV`` writes, without a header:
   username, system, segment id, item type (TGT, CHK, BAD, REF), source and target language,
   score, start and end time (Unix seconds), and with ``--batch-info`` the batch number and
   item id;
3. ``wmt``: the judgments of the WMT direct-assessment scripts (``ad-good-raw.csv``,
   ``ad-latest.csv``), tab-separated with the header ``HITId WorkerId Input.src Input.trg
   Input.item hit sys_id rid type sid score time``.

Then :func:`judgments_import` resolves systems, segments and originals against the campaign and
stores an imported protocol config with tasks (one per HIT), items, shown outputs, assignments,
judgments and values, all or nothing. Every problem names the file and line.
"""

from __future__ import annotations

import gc
import logging
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from annotation.campaigns.uploads import (
    UploadError,
    UploadFile,
    UploadProblem,
)
from annotation.judgment_import.accounts import annotator_accounts
from annotation.judgment_import.context import campaign_context
from annotation.judgment_import.documents import (
    PlannedDocument,
    document_screens,
    documents_insert,
    documents_plan,
)
from annotation.judgment_import.formats import judgments_parse, options_for, segments_placed
from annotation.judgment_import.plan import ImportOptions, ImportPlan, import_plan
from annotation.judgment_import.planned import _PlannedItem, _PlannedOutput
from annotation.judgment_import.preview import PreviewSample, checks_ran, preview_samples
from annotation.judgment_import.progress import ImportProgress, progress_step
from annotation.judgment_import.rows import ParsedJudgments
from annotation.judgment_import.spans import planned_spans, spans_insert
from annotation.judgment_import.standardised import imported_settings, scores_record
from annotation.judgment_import.wmt_segments import segment_numbering_record
from annotation.models import (
    Assignment,
    Campaign,
    Item,
    ItemKind,
    ItemOutput,
    Judgment,
    JudgmentImport,
    JudgmentValue,
    ProtocolConfig,
    Segment,
    Task,
)
from annotation.protocols import PROTOCOLS
from annotation.signals import campaign_data_changed
from evalsite.db.bulk import insert_rows, reserve_ids

logger = logging.getLogger(__name__)


BATCH = 2000


# --------------------------------------------------------------------------------------------
# Preview


@dataclass(frozen=True)
class ImportPreview:
    """What an import would store, without storing it: the rows read, the judgments and
    annotators they make, and how each of the file's system names maps onto the campaign's."""

    file_format: str
    rows: int
    judgments: int
    annotators: int
    # (the file's name, the campaign's system it maps to, rows), in the file's order.
    systems: list[tuple[str, str, int]]
    # Whole-document rows, stored as document-level scores.
    document_judgments: int = 0
    # A few judged screens with their texts, and the checks of alignment that ran.
    samples: list[PreviewSample] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "file_format": self.file_format,
            "rows": self.rows,
            "judgments": self.judgments,
            "annotators": self.annotators,
            "document_judgments": self.document_judgments,
            "systems": [
                {"file": name, "campaign": mapped, "rows": n} for name, mapped, n in self.systems
            ],
            "samples": [sample.as_json() for sample in self.samples],
            "checks": self.checks,
        }


def _read(upload: UploadFile, options: ImportOptions) -> ParsedJudgments:
    """The upload parsed as the options say, for an import or its preview."""
    if options.protocol not in PROTOCOLS:
        raise UploadError(
            [UploadProblem(upload.name, None, f"unknown protocol {options.protocol!r}")]
        )
    return judgments_parse(
        upload,
        file_format=options.file_format,
        language_pair=options.language_pair,
        max_bytes=settings.EVALSITE_UPLOAD_MAX_BYTES,
    )


def judgments_preview(
    *, campaign: Campaign, upload: UploadFile, options: ImportOptions | None = None
) -> ImportPreview:
    """Read and check ``upload`` as :func:`judgments_import` does, and say what it would
    store; nothing is written. Raises the same ``UploadError``."""
    options = options or ImportOptions()
    with _no_cyclic_gc():
        parsed = _read(upload, options)
    return judgments_preview_parsed(campaign=campaign, parsed=parsed, options=options)


def judgments_preview_parsed(
    *, campaign: Campaign, parsed: ParsedJudgments, options: ImportOptions | None = None
) -> ImportPreview:
    """:func:`judgments_preview` of rows already read (a release's: ``JudgmentFormat.texts``)."""
    options = options or ImportOptions()
    with _no_cyclic_gc():
        options, parsed = options_for(parsed, options)
        parsed, numbering = segments_placed(campaign, parsed, options)
        context = campaign_context(campaign, parsed)
        plan = import_plan(parsed, context, options)
        documents = documents_plan(campaign, parsed, context, options, plan)
    counts = Counter(row.system for row in parsed.rows if row.system)
    return ImportPreview(
        file_format=parsed.file_format,
        rows=len(parsed.rows),
        judgments=plan.n_judgments,
        annotators=len(plan.annotators),
        systems=[(name, options.system_map.get(name, name), n) for name, n in counts.items()],
        document_judgments=len(documents),
        samples=preview_samples(plan, context),
        checks=checks_ran(parsed, numbering),
    )


# --------------------------------------------------------------------------------------------
# Storing


def judgments_import(
    *,
    campaign: Campaign,
    upload: UploadFile,
    user: User | None,
    options: ImportOptions | None = None,
    report: ImportProgress | None = None,
) -> JudgmentImport:
    """Parse ``upload`` and store its judgments on ``campaign``, all or nothing; ``report``
    hears of each step as it starts (``judgment_import.progress``).

    Creates an imported :class:`ProtocolConfig` with one task per HIT (per annotator when the
    file has no HIT ids), an item per screen, the shown outputs (QC outputs pointing to their
    originals), one assignment per annotator and task, the judgments and their values, and one
    account per annotator of the file (``imp-<campaign>-<id>``, unusable password).

    QC originals: a REPEAT or BAD_REF row copies the same annotator's SYSTEM row of the same
    system and segment in the same HIT, else in any HIT, else another annotator's, else a real
    item without judgments added to the HIT. A REF row copies a SYSTEM item found so.

    Raises:
        UploadError: unknown systems or segments, bad scores, malformed rows, duplicates; each
            names the file and line. Nothing is stored then.
    """
    options = options or ImportOptions()
    with _no_cyclic_gc():
        progress_step(report, "read")
        parsed = _read(upload, options)
    return judgments_import_parsed(
        campaign=campaign, parsed=parsed, user=user, options=options, report=report
    )


def judgments_import_parsed(
    *,
    campaign: Campaign,
    parsed: ParsedJudgments,
    user: User | None,
    options: ImportOptions | None = None,
    report: ImportProgress | None = None,
) -> JudgmentImport:
    """:func:`judgments_import` of rows already read (a release's: ``JudgmentFormat.texts``)."""
    options = options or ImportOptions()
    with _no_cyclic_gc():
        chosen_scores = options.scores
        options, parsed = options_for(parsed, options)
        with transaction.atomic():
            progress_step(report, "check")
            locked = Campaign.objects.select_for_update().get(pk=campaign.pk)
            parsed, numbering = segments_placed(locked, parsed, options)
            context = campaign_context(locked, parsed)
            plan = import_plan(parsed, context, options)
            documents = documents_plan(locked, parsed, context, options, plan)
            record = _store(locked, parsed, plan, options, user, report, documents)
            segment_numbering_record(record, options, numbering)
            scores_record(record, chosen_scores, options)
            record.summary["checks"] = checks_ran(parsed, numbering)
            record.save(update_fields=["summary"])
            # As every judgment and upload does: the metrics app schedules a recomputation once
            # the import has committed (never if it rolls back).
            campaign_data_changed.send(sender=JudgmentImport, campaign_id=locked.pk)
    logger.info(
        "imported %d judgments from %s into campaign %s", plan.n_judgments, parsed.file, campaign.pk
    )
    return record


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Pause the cycle collector while an import builds its rows. The hundreds of thousands of
    tuples and dicts it holds form no cycles (reference counting frees them), but each
    allocation burst made Python rescan all of them: a third of a 100,000-row import."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _config_name(campaign: Campaign, options: ImportOptions, file: str) -> str:
    base = (options.name or f"Imported: {file}")[:90]
    taken = set(ProtocolConfig.objects.filter(campaign=campaign).values_list("name", flat=True))
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base} ({n})"
    return name


def _segment_places(campaign: Campaign) -> tuple[dict[int, int], dict[int, int]]:
    """Each segment's position and document."""
    rows = Segment.objects.filter(campaign=campaign).values_list("id", "position", "document_id")
    return {pk: p for pk, p, _ in rows}, {pk: d for pk, _, d in rows}


def _when(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, tz=UTC)


def _store(
    campaign: Campaign,
    parsed: ParsedJudgments,
    plan: ImportPlan,
    options: ImportOptions,
    user: User | None,
    report: ImportProgress | None = None,
    documents: list[PlannedDocument] | None = None,
) -> JudgmentImport:
    """Store the plan: accounts, config, tasks, items (as document screens when the import asks
    for document scores), outputs, assignments, judgments, values and document judgments, in
    that order (later rows point to earlier ones), and the import's record."""
    progress_step(report, "items")
    now = timezone.now()
    users = annotator_accounts(campaign, parsed, plan.annotators)
    screens = document_screens(plan, *_segment_places(campaign)) if options.document_score else {}
    kinds = Counter(item.kind for items in plan.tasks.values() for item in items.values())
    annotators_per_task = Counter(
        task for _, task in {(j.annotator, j.task) for j in plan.judgments.values()}
    )
    config = _imported_config(campaign, parsed, plan, options, kinds, annotators_per_task)
    tasks = Task.objects.bulk_create(
        [
            Task(
                config=config,
                position=position,
                size=len(items),
                annotations_needed=annotators_per_task[name],
            )
            for position, (name, items) in enumerate(plan.tasks.items())
        ],
        batch_size=BATCH,
    )
    task_of = dict(zip(plan.tasks, tasks, strict=True))
    _insert_items(plan, task_of, screens)
    progress_step(report, "outputs")
    _insert_outputs(plan)
    progress_step(report, "judgments")
    assignment_id = _create_assignments(plan, users, task_of, now)
    n_judgments, n_values = _insert_judgments(
        plan,
        {annotator: account.pk for annotator, account in users.items()},
        assignment_id,
        now,
    )
    user_id = {annotator: account.pk for annotator, account in users.items()}
    n_documents = documents_insert(documents or [], plan.tasks, user_id, assignment_id, now)
    campaign.annotators.add(*users.values())
    return JudgmentImport.objects.create(
        campaign=campaign,
        config=config,
        file_format=parsed.file_format,
        file_name=parsed.file[:255],
        imported_by=user,
        options={
            "file_format": options.file_format,
            "protocol": options.protocol,
            "criterion": options.criterion,
            "line_base": options.line_base,
            "language_pair": options.language_pair,
        },
        summary={
            "rows": len(parsed.rows),
            "values": n_values,
            "judgments": n_judgments,
            "document_judgments": n_documents,
            "tasks": len(tasks),
            "items": kinds.total(),
            "criteria": plan.criteria,
            "annotators": {a: users[a].get_username() for a in plan.annotators},
            **({"release": parsed.summary} if parsed.summary else {}),
        },
    )


def _imported_config(
    campaign: Campaign,
    parsed: ParsedJudgments,
    plan: ImportPlan,
    options: ImportOptions,
    kinds: Counter[str],
    annotators_per_task: Counter[str],
) -> ProtocolConfig:
    """The imported protocol config, its sizes and QC shares read off the plan (so that the
    config describes the HITs as they were)."""
    protocol = PROTOCOLS[options.protocol]
    n_items = kinds.total()
    per_100 = kinds
    return ProtocolConfig.objects.create(
        campaign=campaign,
        name=_config_name(campaign, options, parsed.file),
        protocol=options.protocol,
        mode=protocol.modes[0].key,
        outputs_per_screen=max(
            (len(i.outputs) for items in plan.tasks.values() for i in items.values()), default=1
        ),
        items_per_task=max((len(items) for items in plan.tasks.values()), default=1),
        annotations_per_task=max(annotators_per_task.values(), default=1),
        qc_bad_reference=min(50, round(100 * per_100[ItemKind.BAD_REFERENCE] / max(n_items, 1))),
        qc_repeat=min(50, round(100 * per_100[ItemKind.REPEAT] / max(n_items, 1))),
        qc_reference=min(50, round(100 * per_100[ItemKind.REFERENCE] / max(n_items, 1))),
        instructions=f"Imported from {parsed.file} ({parsed.file_format}).",
        screen=ProtocolConfig.Screen.DOCUMENT if options.document_score else "segment",
        document_score=options.document_score,
        settings=imported_settings(options),
    )


def _insert_items(
    plan: ImportPlan, task_of: dict[str, Task], screens: dict[tuple[str, Any], int]
) -> None:
    """Insert every planned item, a screen of its own or on the document screen ``screens``
    places it on; each planned item gets its id and position."""
    for items in plan.tasks.values():
        for position, item in enumerate(items.values()):
            item.position = position
    # Real items first, then the QC items that copy them; outputs without an original first,
    # then the copies that point to them. Ids are reserved up front so that rows can point to
    # each other without a model instance per row (see insert_rows).
    item_order = [
        item
        for real in (True, False)
        for items in plan.tasks.values()
        for item in items.values()
        if (item.kind == ItemKind.REAL) == real
    ]
    for item, pk in zip(item_order, reserve_ids(Item, len(item_order)), strict=True):
        item.id = pk

    def rows() -> Iterator[tuple[Any, ...]]:
        for item in item_order:
            kind = item.kind
            original = (
                None
                if kind == ItemKind.REAL or item.original is None
                else plan.tasks[item.original[0]][item.original[1]].id
            )
            yield (
                item.id,
                task_of[item.task].pk,
                item.position,
                kind,
                item.segment_id,
                original,
                screens.get((item.task, item.key)),
            )

    insert_rows(Item, ("id", "task", "position", "kind", "segment", "original", "screen"), rows())


def _insert_outputs(plan: ImportPlan) -> None:
    """Insert every shown output, originals before their copies (ids reserved up front, as for
    the items, and set on each planned output)."""

    def in_order() -> Iterator[tuple[_PlannedItem, int, _PlannedOutput]]:
        for copies in (False, True):
            for items in plan.tasks.values():
                for item in items.values():
                    for slot, planned in enumerate(item.outputs):
                        if (planned.original is not None) == copies:
                            yield item, slot, planned

    n = sum(len(item.outputs) for items in plan.tasks.values() for item in items.values())
    for (_, _, planned), pk in zip(in_order(), reserve_ids(ItemOutput, n), strict=True):
        planned.id = pk

    def rows() -> Iterator[tuple[Any, ...]]:
        for item, slot, planned in in_order():
            original = planned.original
            yield (
                planned.id,
                item.id,
                slot,
                planned.kind,
                None if planned.source[0] == "r" else planned.source[1],
                planned.system_id,
                planned.run_id,
                planned.source[1] if planned.source[0] == "r" else None,
                plan.tasks[original[0]][original[1]].outputs[original[2]].id if original else None,
                planned.text,
            )

    insert_rows(
        ItemOutput,
        (
            "id",
            "item",
            "position",
            "kind",
            "translation",
            "system",
            "run",
            "reference",
            "original",
            "text",
        ),
        rows(),
    )


def _create_assignments(
    plan: ImportPlan,
    users: dict[str, User],
    task_of: dict[str, Task],
    now: datetime,
) -> dict[tuple[str, str], uuid.UUID]:
    """One finished assignment per annotator and task, spanning the times of its judgments
    (the import's time when the file has none); returns the id of each (annotator, task)."""
    times: dict[tuple[str, str], list[datetime]] = {}
    done = Counter((j.annotator, j.task) for j in plan.judgments.values())
    for judgment in plan.judgments.values():
        stamps = [t for t in (_when(judgment.started), _when(judgment.submitted)) if t]
        times.setdefault((judgment.annotator, judgment.task), []).extend(stamps or [now])
    assignments = {
        key: Assignment(
            task=task_of[key[1]],
            annotator=users[key[0]],
            status=Assignment.Status.DONE,
            origin=Assignment.Origin.PUSH,
            claimed_at=min(stamps),
            completed_at=max(stamps),
            items_done=done[key],
        )
        for key, stamps in times.items()
    }
    Assignment.objects.bulk_create(assignments.values(), batch_size=BATCH)
    return {key: assignment.pk for key, assignment in assignments.items()}


def _insert_judgments(
    plan: ImportPlan,
    user_id: dict[str, Any],
    assignment_id: dict[tuple[str, str], uuid.UUID],
    now: datetime,
) -> tuple[int, int]:
    """Insert the judgments, then their values, each streamed from the plan into the database
    (a list of every row first held a million answers at once); returns how many of each were
    stored."""
    judgment_ids = reserve_ids(Judgment, len(plan.judgments))
    span_rows: list[tuple[Any, ...]] = []

    def judgment_rows() -> Iterator[tuple[Any, ...]]:
        for judgment_id, planned in zip(judgment_ids, plan.judgments.values(), strict=True):
            item = plan.tasks[planned.task][planned.item]
            answer: dict[str, dict[str, Any]] = {}
            for (slot, criterion), value in planned.values:
                answer.setdefault(str(item.outputs[slot].id), {})[criterion] = value
            span_rows.extend(planned_spans(judgment_id, planned, item, answer))
            yield (
                judgment_id,
                item.id,
                user_id[planned.annotator],
                assignment_id[(planned.annotator, planned.task)],
                1,
                uuid.uuid4(),
                answer,
                _when(planned.started),
                _when(planned.submitted) or now,
                planned.seconds,
            )

    def value_rows() -> Iterator[tuple[Any, ...]]:
        for judgment_id, planned in zip(judgment_ids, plan.judgments.values(), strict=True):
            outputs = plan.tasks[planned.task][planned.item].outputs
            for (slot, criterion), value in planned.values:
                yield (judgment_id, outputs[slot].id, criterion, value)

    insert_rows(
        Judgment,
        (
            "id",
            "item",
            "annotator",
            "assignment",
            "revision",
            "submission_id",
            "answer",
            "shown_at",
            "submitted_at",
            "seconds",
        ),
        judgment_rows(),
    )
    insert_rows(JudgmentValue, ("judgment", "output", "criterion", "value"), value_rows())
    spans_insert(span_rows)
    return len(judgment_ids), sum(len(planned.values) for planned in plan.judgments.values())
