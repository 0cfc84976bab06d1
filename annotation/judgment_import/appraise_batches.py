"""Appraise's batches — the JSON a campaign of document-level ESA/MQM tasks is built from — as
the texts of a new campaign, and the rows of its score export (appraise_spans.py) placed on them.

Appraise makes one task per entry of the batches file (``{"task": {"batchNo", …}, "items":
[…]}``); its items keep the batch's ``itemID``, which counts within the batch (1 to 100), and
the export's item id is that ``itemID`` (AppraiseDev/Appraise ``EvalData/models/
direct_assessment_document.py``, ``import_from_json`` and ``get_system_data``, commit
054e27cb). An item id therefore means nothing without its batch, and the export (without
``--batch-info``) does not say which batch an annotator had: it is read off the rows. An
annotator's batch is the one batch in which every row's item id names an item of the row's
document id (``doc#system``), item type and system; no such batch, or several, is refused,
naming the row.

Rows of tutorial items (an ``mqm`` field with ``tutorial``) and of ``#duplicate`` items (copies
that fill a batch up to its size) are left out and counted; an item answered more than once
keeps its last answer (the latest end time; at a tie, the later row), the others counted. A
BAD item's ``targetText`` is the degraded copy the annotator saw: it is the QC item's shown
text, not a system output, so its spans are placed on it. Whole-document items are not
segments: their rows are document scores of the batch's screen.

Segments are keyed by ``_item`` (``system | segment number | document``), else by the source
text within its document; a segment or system output that two batch items give differently is
refused, naming both items.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import re
import zlib
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _

from annotation.campaigns.uploads import (
    DEFAULT_RUN,
    ParsedOutput,
    ParsedSegment,
    ParsedUpload,
    UploadError,
    UploadFile,
    UploadProblem,
    decode_text,
)
from annotation.judgment_import.rows import (
    APPRAISE_TYPES,
    ImportRow,
    ParsedJudgments,
    Problems,
    clip,
)
from annotation.protocols.mqm import Weights

FORM = "appraise"
OUTPUT_TYPES = ("TGT", "CHK")
RESUBMISSIONS = "last"  # the answer kept of an item answered more than once
# The summary's count of batches read: the rows were placed on them.
BATCHES = "batches"
# A batch's task may carry the MQM weights its scores were computed with (EvalSite's export
# writes them; Appraise's batches have none): the import then scores MQM rows with them.
MQM_WEIGHTS = "_mqmWeights"
_TUTORIAL = re.compile(r"""^\s*\{\s*['"]tutorial['"]\s*:""")
_APPRAISE_TYPE = {ours: theirs for theirs, ours in APPRAISE_TYPES.items()}
_REQUIRED = ("itemID", "itemType", "documentID", "targetID", "sourceText", "targetText")


@dataclass(frozen=True)
class BatchItem:
    """One item of a batch, as the export's rows name it and as the campaign stores it."""

    item_id: str
    type: str  # Appraise's: TGT, CHK, BAD, REF
    document: str  # doc#system[#badN|#duplicateN]
    systems: tuple[str, ...]  # targetID split at "+" (one output of several systems)
    source: str
    target: str
    whole: bool
    tutorial: bool
    duplicate: bool
    segment: tuple[str, str] | None  # (document, segment) in the campaign; None: not a segment


@dataclass(frozen=True)
class Batch:
    file: str
    batch_no: str
    items: dict[str, BatchItem]
    weights: dict[str, float] | None = None  # MQM_WEIGHTS, when the batch carries them

    @property
    def label(self) -> str:
        """As messages and task names say it."""
        return f"batch {self.batch_no}"

    def number(self, given: str) -> bool:
        """Whether the batch is the one a row's batch number names (any, for none)."""
        return not given or given.strip() == self.batch_no


def appraise_batch_texts(
    parsed: ParsedJudgments, companions: Sequence[UploadFile]
) -> tuple[ParsedUpload, ParsedJudgments]:
    """The texts of the batches as a new campaign's upload, and ``parsed``'s rows placed on
    them (see the module): segment ``doc:seg``, task the batch, item the item id, the shown
    texts on the row; tutorial, duplicate and earlier resubmitted rows left out and counted in
    ``parsed.summary``. Raises UploadError naming the row (or batch item) of every problem."""
    if not companions:
        raise UploadError(
            [UploadProblem(parsed.file, None, _("Appraise's batches file (JSON) is needed"))]
        )
    batches = [batch for upload in companions for batch in _batches(upload)]
    _distinct(batches)
    texts, names = _texts(batches, [upload.name for upload in companions])
    problems = Problems(parsed.file)
    # An annotator's rows, by the batch number the export gives (--batch-info) if it does.
    rows_of: dict[tuple[str, str], list[ImportRow]] = defaultdict(list)
    for row in [*parsed.rows, *parsed.documents]:
        rows_of[(row.annotator, row.hit)].append(row)
    counts: Counter[str] = Counter()
    kept: dict[tuple[str, str, str, str], ImportRow] = {}
    batch_of: dict[str, list[str]] = defaultdict(list)
    for (annotator, given), rows in rows_of.items():
        pool = [b for b in batches if b.number(given)]
        if not pool:
            problems.add(rows[0].line, _("batch %s is not in the batches file") % clip(given))
            continue
        batch = _batch_of(problems, annotator, rows, pool)
        if batch is None:
            continue
        batch_of[annotator].append(batch.label)
        for row in rows:
            item = batch.items[_item_id(row)]
            if item.tutorial or item.duplicate:
                counts["tutorial_rows" if item.tutorial else "duplicate_rows"] += 1
                continue
            if item.type == "REF":
                problems.add(
                    row.line, _("a REF item: references shown as outputs are not read from batches")
                )
                continue
            key = (annotator, batch.label, item.item_id, row.system)
            earlier = kept.get(key)
            if earlier is not None:
                counts["resubmitted_rows"] += 1
                if (earlier.submitted or 0, earlier.line) > (row.submitted or 0, row.line):
                    continue
            kept[key] = _placed(row, batch, item, names)
    problems.raise_if_any()
    placed = sorted(kept.values(), key=lambda row: row.line)
    summary = {
        BATCHES: len(batches),
        **_placed_weights(parsed.file, batches, batch_of),
        "batch_of_annotator": batch_of,
        "tutorial_rows": counts["tutorial_rows"],
        "duplicate_rows": counts["duplicate_rows"],
        "resubmitted_rows": counts["resubmitted_rows"],
        "resubmissions_kept": RESUBMISSIONS,
    }
    return texts, replace(
        parsed,
        rows=[row for row in placed if not row.document],
        documents=[row for row in placed if row.document],
        has_items=True,
        summary={**parsed.summary, **summary},
    )


def _item_id(row: ImportRow) -> str:
    """The row's item id as the batches write it ("7", not "007")."""
    value = row.segment.strip()
    return str(int(value)) if value.isdigit() and len(value) < 10 else value


def _placed(
    row: ImportRow, batch: Batch, item: BatchItem, names: dict[tuple[str, str], str]
) -> ImportRow:
    """The row on the campaign's texts: a whole-document row keeps its document, a segment row
    gets its segment; both the batch as their task and the texts the annotator saw."""
    if row.document:
        return replace(row, hit=batch.label, item=item.item_id)
    assert item.segment is not None
    return replace(
        row,
        segment=f"{item.segment[0]}:{names[item.segment]}",
        hit=batch.label,
        item=item.item_id,
        source_text=item.source,
        output_text=item.target,
    )


# --------------------------------------------------------------------------------------------
# Which batch an annotator had


def _fits(row: ImportRow, item: BatchItem | None) -> bool:
    return (
        item is not None
        and item.document == row.item_document
        and APPRAISE_TYPES.get(item.type) == row.type
        and row.system in item.systems
        and item.whole == bool(row.document)
    )


def _batch_of(
    problems: Problems, annotator: str, rows: list[ImportRow], pool: list[Batch]
) -> Batch | None:
    """The one batch of ``pool`` where every row of ``annotator`` fits its item (None, with a
    problem naming a row, when none does or several do)."""
    # The first row narrows the batches down at once: checking every row against every batch
    # would take rows × batches steps on a large release.
    first = _item_id(rows[0])
    fitting = [b for b in pool if _fits(rows[0], b.items.get(first))]
    fitting = [b for b in fitting if all(_fits(r, b.items.get(_item_id(r))) for r in rows)]
    if len(fitting) == 1:
        return fitting[0]
    if len(fitting) > 1:
        if all(b.items[_item_id(r)].tutorial for b in fitting for r in rows):
            return fitting[0]  # tutorial rows only: left out whichever batch it was
        names = ", ".join(b.label for b in fitting[:5])
        problems.add(
            rows[0].line,
            _(
                "annotator %(annotator)s's %(n)d rows fit several batches alike (%(names)s): "
                "which texts they saw is unknown; export the scores with the batch number "
                "(--batch-info) or give only the batch they worked on"
            )
            % {"annotator": annotator, "n": len(rows), "names": names},
        )
        return None
    best = max(
        pool, key=lambda b: sum(_fits(r, b.items.get(_item_id(r))) for r in rows), default=None
    )
    misfit = next(
        (r for r in rows if best is None or not _fits(r, best.items.get(_item_id(r)))), rows[0]
    )
    problems.add(misfit.line, _misfit_message(annotator, misfit, best, pool))
    return None


def _misfit_message(
    annotator: str, row: ImportRow, best: Batch | None, batches: list[Batch]
) -> str:
    item_id = _item_id(row)
    if best is None or not any(item_id in b.items for b in batches):
        return _("item id %(id)s is in no batch of the batches file") % {"id": clip(item_id)}
    item = best.items.get(item_id)
    said = _("document %(document)s, system %(system)s, %(type)s") % {
        "document": clip(row.item_document),
        "system": clip(row.system),
        "type": _("whole document") if row.document else _APPRAISE_TYPE[row.type],
    }
    if item is None:
        shown = _("has no item %(id)s") % {"id": item_id}
    else:
        shown = _("holds document %(document)s, system %(system)s, %(type)s as item %(id)s") % {
            "document": clip(item.document),
            "system": "+".join(item.systems),
            "type": _("whole document") if item.whole else clip(item.type),
            "id": item_id,
        }
    return _(
        "no batch holds every row of annotator %(annotator)s: this row says %(said)s; "
        "%(batch)s, which holds most of their rows, %(shown)s"
    ) % {"annotator": annotator, "said": said, "batch": best.label, "shown": shown}


# --------------------------------------------------------------------------------------------
# Reading the batches


def _json_of(upload: UploadFile) -> Any:
    """The batches file's JSON, gzip-compressed or not."""
    max_bytes = settings.EVALSITE_UPLOAD_MAX_BYTES
    content = upload.content
    if content[:2] == b"\x1f\x8b":
        try:
            # A bound on what is inflated: a small file may unpack to gigabytes.
            with gzip.GzipFile(fileobj=io.BytesIO(content)) as unpacked:
                content = unpacked.read(max_bytes + 1)
        except (OSError, EOFError, zlib.error) as exc:
            raise UploadError(
                [UploadProblem(upload.name, None, _("not a readable gzip file: %s") % exc)]
            ) from None
        if len(content) > max_bytes:
            message = _("unpacked, the batches are over the limit of %s bytes") % f"{max_bytes:,}"
            raise UploadError([UploadProblem(upload.name, None, message)])
    text = decode_text(UploadFile(upload.name, content, upload.role), max_bytes=max_bytes)
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise UploadError(
            [UploadProblem(upload.name, None, _("not Appraise's batches (JSON): %s") % exc)]
        ) from None


def _batches(upload: UploadFile) -> list[Batch]:
    data = _json_of(upload)
    problems = Problems(upload.name)
    if not isinstance(data, list):
        data = [data]
    batches: list[Batch] = []
    for k, task in enumerate(data, start=1):
        if not (isinstance(task, dict) and isinstance(task.get("items"), list)):
            problems.add(None, _("task %d is not an object with a list of items") % k)
            continue
        meta = task.get("task")
        number = meta.get("batchNo", k) if isinstance(meta, dict) else k
        label = f"batch {number}"
        batch_no = str(number).strip()
        items: dict[str, BatchItem] = {}
        for item in task["items"]:
            read = _batch_item(problems, label, item)
            if read is not None and read.item_id in items:
                problems.add(
                    None, _("%(batch)s has two items %(id)s") % {"batch": label, "id": read.item_id}
                )
            elif read is not None:
                items[read.item_id] = read
        weights = _weights(
            problems, label, meta.get(MQM_WEIGHTS) if isinstance(meta, dict) else None
        )
        batches.append(Batch(upload.name, batch_no, items, weights))
    problems.raise_if_any()
    return batches


def _placed_weights(
    file: str, batches: list[Batch], batch_of: dict[str, list[str]]
) -> dict[str, dict[str, float]]:
    """``{MQM_WEIGHTS: weights}`` when the batches the rows were placed on carry MQM weights
    (one set: a config has one); refused when they carry different ones."""
    used = {label for labels in batch_of.values() for label in labels}
    found = {
        json.dumps(b.weights, sort_keys=True) for b in batches if b.label in used and b.weights
    }
    if len(found) > 1:
        message = _("the batches carry different MQM weights: import their rows apart")
        raise UploadError([UploadProblem(file, None, message)])
    return {MQM_WEIGHTS: json.loads(found.pop())} if found else {}


def _weights(problems: Problems, label: str, given: Any) -> dict[str, float] | None:
    """The batch's MQM weights: an object of finite numbers named as MQM's weights."""
    if given is None:
        return None
    known = {f.name for f in fields(Weights)}
    if not (
        isinstance(given, dict)
        and set(given) <= known
        and all(isinstance(v, int | float) and math.isfinite(v) for v in given.values())
    ):
        problems.add(
            None,
            _("%(batch)s: %(key)s must map %(names)s to numbers")
            % {"batch": label, "key": MQM_WEIGHTS, "names": ", ".join(sorted(known))},
        )
        return None
    return Weights.from_json(given).as_json()


def _distinct(batches: list[Batch]) -> None:
    """Refuse two batches of one number: a row's batch number would name either."""
    twice = [name for name, n in Counter(b.label for b in batches).items() if n > 1]
    if twice:
        message = _("two tasks are %s: batch numbers must differ") % twice[0]
        raise UploadError([UploadProblem(batches[0].file, None, message)])


def _batch_item(problems: Problems, label: str, item: Any) -> BatchItem | None:
    if not isinstance(item, dict) or any(not isinstance(item.get(k), str | int) for k in _REQUIRED):
        problems.add(
            None,
            _("an item of %(batch)s lacks one of %(keys)s")
            % {"batch": label, "keys": ", ".join(_REQUIRED)},
        )
        return None
    document = str(item["documentID"])
    parts = document.split("#")
    mqm = item.get("mqm")
    tutorial = (isinstance(mqm, dict) and "tutorial" in mqm) or (
        isinstance(mqm, str) and bool(_TUTORIAL.match(mqm))
    )
    whole = str(item.get("isCompleteDocument", False)).strip().lower() == "true"
    return BatchItem(
        item_id=str(item["itemID"]).strip(),
        type=str(item["itemType"]),
        document=document,
        systems=tuple(str(item["targetID"]).split("+")),
        source=str(item["sourceText"]),
        target=str(item["targetText"]),
        whole=whole,
        tutorial=tutorial,
        duplicate=any(p.startswith("duplicate") for p in parts[2:]),
        segment=None if tutorial or whole else _segment(parts[0], item),
    )


def _segment(document: str, item: dict[str, Any]) -> tuple[str, str]:
    """The segment: ``_item``'s number (``system | number | document``), else its source text
    (numbered in :func:`_texts`)."""
    parts = [p.strip() for p in str(item.get("_item", "")).split("|")]
    if len(parts) == 3 and parts[1].isdigit():
        return document, parts[1]
    return document, "\x00" + str(item["sourceText"])


def _texts(
    batches: list[Batch], files: list[str]
) -> tuple[ParsedUpload, dict[tuple[str, str], str]]:
    """Segments and system outputs of every batch item that is neither a tutorial's nor a
    duplicate nor a whole document (BAD items' texts stay on their rows), and each segment
    key's id in the campaign."""
    problems = Problems(files[0])
    sources: dict[tuple[str, str], _Given] = {}
    outputs: dict[str, dict[tuple[str, str], _Given]] = defaultdict(dict)
    for batch in batches:
        for item in batch.items.values():
            if item.segment is None or item.duplicate:
                continue
            given = _Given(item.source, batch.label, item.item_id)
            _same(problems, _("the source"), sources, item.segment, given)
            if item.type in OUTPUT_TYPES:
                for system in item.systems:
                    given = _Given(item.target, batch.label, item.item_id)
                    _same(problems, system, outputs[system], item.segment, given)
    for batch in batches:
        for item in batch.items.values():
            missing = [s for s in item.systems if item.segment not in outputs.get(s, {})]
            if item.type == "BAD" and item.segment is not None and missing:
                problems.add(
                    None,
                    _(
                        "%(batch)s item %(id)s is a BAD copy of %(system)s's output in "
                        "%(document)s, but no TGT item holds that output"
                    )
                    % {
                        "batch": batch.label,
                        "id": item.item_id,
                        "system": missing[0],
                        "document": clip(item.document),
                    },
                )
    problems.raise_if_any()
    ordered, names = _numbering(list(sources))
    segments = [
        ParsedSegment(key[0], names[key], sources[key].text, [], 1, files[0]) for key in ordered
    ]
    return (
        ParsedUpload(
            form=FORM,
            files=list(files),
            segments=segments,
            reference_labels=[],
            outputs=[
                ParsedOutput(
                    system=system,
                    run=DEFAULT_RUN,
                    file=files[0],
                    by_key={(key[0], names[key]): (g.text, 1) for key, g in texts.items()},
                )
                for system, texts in outputs.items()
            ],
        ),
        names,
    )


@dataclass(frozen=True)
class _Given:
    """A text as a batch item gives it."""

    text: str
    batch: str
    item: str


def _same(
    problems: Problems,
    what: str,
    known: dict[tuple[str, str], _Given],
    key: tuple[str, str],
    given: _Given,
) -> None:
    """Keep the text of ``key``; a second, different one is refused, naming both items."""
    first = known.setdefault(key, given)
    if first.text != given.text:
        problems.add(
            None,
            _(
                "%(batch)s item %(id)s gives %(what)s of segment %(segment)s of %(document)s as "
                "%(text)r, %(first_batch)s item %(first_id)s as %(first_text)r: one text was "
                "shown two ways"
            )
            % {
                "batch": given.batch,
                "id": given.item,
                "what": what,
                "segment": key[1].lstrip("\x00")[:60],
                "document": key[0],
                "text": clip(given.text),
                "first_batch": first.batch,
                "first_id": first.item,
                "first_text": clip(first.text),
            },
        )


def _numbering(
    keys: list[tuple[str, str]],
) -> tuple[list[tuple[str, str]], dict[tuple[str, str], str]]:
    """The segments in campaign order and their ids: with ``_item``'s numbers (WMT's line
    numbers) documents by their first line and segments by number; otherwise documents and
    segments in the batches' order, numbered s1, s2, … within their document."""
    if all(seg.isdigit() for _, seg in keys):
        first: dict[str, int] = {}
        for doc, seg in keys:
            first[doc] = min(first.get(doc, int(seg)), int(seg))
        ordered = sorted(keys, key=lambda k: (first[k[0]], k[0], int(k[1])))
        return ordered, {key: key[1] for key in keys}
    by_document: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for key in keys:
        by_document[key[0]].append(key)
    names = {
        key: key[1] if key[1].isdigit() else f"s{n}"
        for doc_keys in by_document.values()
        for n, key in enumerate(doc_keys, start=1)
    }
    return [key for doc_keys in by_document.values() for key in doc_keys], names
