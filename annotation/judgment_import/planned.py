"""What an import plans to store: the shown outputs, items (screens) and judgments of each task
(HIT), before any is written; made by annotation/judgment_import/plan.py, checked by
annotation/judgment_import/checks.py, stored by annotation/judgment_import/services.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from annotation.models import ItemKind

# A shown output: ("t", translation id) for a system output, ("r", reference id) for a
# reference. Items are keyed within their task.
OutputKey = tuple[str, int]


@dataclass(slots=True)
class _PlannedOutput:
    kind: str
    source: OutputKey
    system_id: int | None
    run_id: int | None
    text: str
    original: tuple[str, Any, int] | None = None  # (task, item key, slot) of the original
    id: int = 0  # once stored


@dataclass(slots=True)
class _PlannedItem:
    task: str
    key: Any
    segment_id: int
    # A tuple (not a list): a screen shows a few outputs, and a list is 40 bytes larger.
    outputs: tuple[_PlannedOutput, ...] = ()
    original: tuple[str, Any] | None = None  # (task, item key)
    # Once stored: the item's id and its position in its task (the store sets them on the
    # item, where dicts keyed by (task, key) held a few hundred bytes an item more).
    id: int = 0
    position: int = 0

    def slot_of(self, kind: str, source: OutputKey) -> int | None:
        """The slot showing ``source`` as ``kind``. A scan: a screen shows a few outputs, and a
        dict of them an item held a fifth of a million-row import's memory."""
        for slot, output in enumerate(self.outputs):
            if output.source == source and output.kind == kind:
                return slot
        return None

    @property
    def has_real(self) -> bool:
        return any(o.kind == ItemKind.REAL for o in self.outputs)

    @property
    def kind(self) -> str:
        """Real when it shows a system output as such (a reference may be among them, as on
        a ranking screen); otherwise its QC kind, as the task builder stores copies."""
        if self.has_real or not self.outputs:
            return ItemKind.REAL
        kinds = {o.kind for o in self.outputs}
        for kind in (ItemKind.BAD_REFERENCE, ItemKind.REFERENCE, ItemKind.REPEAT):
            if kind in kinds:
                return kind
        return ItemKind.REAL


@dataclass(slots=True)
class _PlannedJudgment:
    annotator: str
    task: str
    item: Any
    # ((slot, criterion), value) in the file's order: pairs in a tuple, where a dict of one
    # value took 200 bytes of each of a million judgments.
    values: tuple[tuple[tuple[int, str], float], ...] = ()
    # An error-span kind's spans by slot, (start, end, severity, category), and the line of
    # the row that gave each; None (not two empty dicts a judgment) while it has none.
    spans: dict[int, tuple[tuple[int, int, str, str], ...]] | None = None
    span_lines: dict[int, tuple[int, ...]] | None = None
    seconds: float | None = None
    started: float | None = None
    submitted: float | None = None

    def value(self, slot: int, criterion: str) -> float | None:
        """The value given to the output in ``slot`` on ``criterion``, if any."""
        for (s, c), value in self.values:
            if s == slot and c == criterion:
                return value
        return None


@dataclass
class ImportPlan:
    tasks: dict[str, dict[Any, _PlannedItem]]
    judgments: dict[tuple[str, str, Any], _PlannedJudgment]
    annotators: list[str]
    criteria: list[str]

    @property
    def n_judgments(self) -> int:
        return len(self.judgments)
