"""An annotator works through a task as the annotation page has them do it: each screen in
turn, answered and recorded, until the task has none left."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from annotation.judging.screens import JudgmentError, annotation_screen
from annotation.judging.services import judgment_record
from annotation.models import ProtocolConfig
from annotation.tasking.services import task_assign_next


def answer_every_screen(
    config: ProtocolConfig, rater: Any, answer: Callable[[Any], dict[str, Any]]
) -> None:
    """``rater`` takes the config's next task and answers each shown output with
    ``answer(output)`` until no screen is left."""
    assignment = task_assign_next(config=config, annotator=rater)
    assert assignment is not None
    while True:
        try:
            screen = annotation_screen(assignment_id=assignment.pk, annotator=rater)
        except JudgmentError:
            return
        judgment_record(
            assignment_id=assignment.pk,
            annotator=rater,
            item_id=screen.item.pk,
            revision_seen=0,
            submission_id=uuid.uuid4(),
            answer={str(o.pk): answer(o) for o in screen.outputs},
        )
