"""The judgment report's ``answer`` column: what an output's answer holds beyond its numbers and
error spans, as its kind writes it (``Protocol.answer_cell``: a post-edited text, say). A report
reads the stored answers in bulk, one query per chunk of rows that has rows of such a kind (none
for the built-in kinds, whose rows leave the column empty), inside the report's snapshot."""

from __future__ import annotations

from collections.abc import Mapping

from annotation.models import Judgment
from annotation.protocols import PROTOCOLS, Protocol


def answer_cell_kinds(configs: Mapping[int, tuple[str, str]]) -> dict[int, Protocol]:
    """The configs (``{id: (name, protocol)}``) whose kind gives an answer cell, with it."""
    return {
        pk: PROTOCOLS[protocol]
        for pk, (_name, protocol) in configs.items()
        if protocol in PROTOCOLS and PROTOCOLS[protocol].has_answer_cell
    }


def chunk_answer_cells(
    configs: list[int], judgments: list[int], outputs: list[int], kinds: Mapping[int, Protocol]
) -> list[str | None]:
    """Per row (its config, judgment and output): its answer cell, None where its kind gives
    none (no query when the chunk has no row of a kind that gives one)."""
    if not kinds:
        return [None] * len(configs)
    wanted = {j for c, j in zip(configs, judgments, strict=True) if c in kinds}
    stored = dict(Judgment.objects.filter(pk__in=wanted).values_list("pk", "answer"))
    return [
        kinds[c].answer_cell(stored[j].get(str(o), {})) if c in kinds else None
        for c, j, o in zip(configs, judgments, outputs, strict=True)
    ]
