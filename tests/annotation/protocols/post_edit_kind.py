"""A post-editing kind, written as a kind with a new answer shape is: this module and a
``register`` call, no other file. The annotator corrects each shown translation; the answer is
the corrected text (``{"post_edit": "…"}`` per output), and the kind scores it by HTER (Snover
et al. 2006): TER of the shown output against its post-edit, in percent, lower is better. The
analysis reads HTER as any score criterion; the judgment report's ``answer`` column carries the
post-edited text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from annotation.protocols import SOURCE_BASED, AnswerPart, Criterion, Protocol
from evalcore.scoring.ter import TER

POST_EDIT = "post_edit"
HTER = Criterion("hter", "HTER", 0, 100, higher_is_better=False)
POST_EDIT_PART = AnswerPart(
    POST_EDIT, {"type": "string", "minLength": 1}, "A post-edited text is required."
)


def hter(shown: str, post_edit: str) -> float:
    """TER of the shown output against its post-edit, as sacreBLEU computes it (percent)."""
    return TER().sentence_score(shown, [post_edit])


@dataclass(frozen=True)
class PostEditProtocol(Protocol):
    """Nothing asked on a scale: one post-edited text per output, HTER worked out from it."""

    answer_parts: tuple[AnswerPart, ...] = (POST_EDIT_PART,)
    has_answer_cell: bool = True

    def criteria_for(self, n_outputs: int) -> tuple[Criterion, ...]:
        return ()

    def import_criteria(self) -> tuple[Criterion, ...]:
        return self.criteria

    def validate(
        self,
        answer: Mapping[str, Any],
        output_ids: Sequence[int],
        *,
        texts: Mapping[int, str] | None = None,
    ) -> tuple[dict[tuple[int, str], float], list[str]]:
        values: dict[tuple[int, str], float] = {}
        errors: list[str] = []
        if {str(k) for k in answer} - {str(o) for o in output_ids}:
            errors.append("The answer names outputs that are not on this screen.")
        for position, output_id in enumerate(output_ids, start=1):
            given = answer.get(str(output_id))
            edited = given.get(POST_EDIT) if isinstance(given, Mapping) else None
            if not isinstance(edited, str) or not edited.strip():
                errors.append(f"Output {position}: give the post-edited translation.")
                continue
            if set(given) != {POST_EDIT}:
                errors.append(f"Output {position}: the answer holds only the post-edit.")
                continue
            shown = (texts or {}).get(int(output_id))
            if shown is None:
                errors.append(f"Output {position}: its text is unknown.")
                continue
            values[(int(output_id), HTER.key)] = hter(shown, edited)
        return values, errors

    def stored_answer(
        self,
        values: Mapping[tuple[int, str], float],
        output_ids: Sequence[int],
        answer: Mapping[str, Any],
    ) -> dict[str, dict[str, Any]]:
        stored = super().stored_answer(values, output_ids, answer)
        for output_id in output_ids:
            stored[str(output_id)][POST_EDIT] = answer[str(output_id)][POST_EDIT]
        return stored

    def answer_cell(self, stored: Mapping[str, Any]) -> Any:
        return stored.get(POST_EDIT)


POST_EDITING = PostEditProtocol(
    "post_edit_hter",
    "Post-editing (HTER)",
    (HTER,),
    (SOURCE_BASED,),
    single_output=True,
    instructions="Correct the translation with as few edits as you can.",
)
