"""A crowd worker's quality control at the end of their task, and the completion rule on it.

The bad-reference test is per annotator: it pairs each degraded copy with the same annotator's
judgment of its original, and a z space standardises by that annotator's own mean and SD. So it
can run on one worker's judgments alone, at the moment they finish, and gives the verdict the
campaign's analysis would give them (same test, space and threshold, from the campaign's
analysis settings) — without the organizer's later include/exclude decisions, which do not
exist yet then.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from annotation.analysis.families.registry import family_of_protocol
from annotation.analysis.qc import criterion_qc
from annotation.analysis.results import QC_FAILED, QC_PASSED, QC_UNTESTED
from annotation.analysis.selectors import campaign_analysis_settings
from annotation.analysis.tables import criterion_table_load, criterion_values
from annotation.models import CompletionRule, ProtocolConfig

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class CriterionOutcome:
    """The bad-reference test on one criterion: "passed", "failed" or "untested" (fewer than
    two bad-reference pairs), with the pairs and the one-sided p-value (None when untested)."""

    criterion: str
    status: str
    n: int
    p_value: float | None


@dataclass(frozen=True)
class CrowdQC:
    """A worker's QC on every criterion of their protocol, and the test it ran.

    ``status`` is "failed" when some criterion failed, "passed" when every criterion passed,
    otherwise "untested".
    """

    test: str
    space: str
    threshold: float
    criteria: tuple[CriterionOutcome, ...]

    @property
    def status(self) -> str:
        statuses = {c.status for c in self.criteria}
        if QC_FAILED in statuses:
            return QC_FAILED
        if statuses == {QC_PASSED}:
            return QC_PASSED
        return QC_UNTESTED

    def to_json(self) -> dict[str, Any]:
        return {
            "version": SCHEMA_VERSION,
            "test": self.test,
            "space": self.space,
            "threshold": self.threshold,
            "status": self.status,
            "criteria": [
                {"criterion": c.criterion, "status": c.status, "n": c.n, "p_value": c.p_value}
                for c in self.criteria
            ],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CrowdQC | None:
        """The QC of :meth:`to_json`; None for an empty dict (no completion yet)."""
        if not data:
            return None
        return cls(
            test=data["test"],
            space=data["space"],
            threshold=data["threshold"],
            criteria=tuple(
                CriterionOutcome(
                    criterion=c["criterion"], status=c["status"], n=c["n"], p_value=c["p_value"]
                )
                for c in data["criteria"]
            ),
        )


def crowd_qc_compute(*, config: ProtocolConfig, annotator_id: int) -> CrowdQC:
    """The bad-reference test on one annotator's judgments of ``config``, criterion by
    criterion, with the campaign's analysis settings (one query per criterion)."""
    settings = campaign_analysis_settings(campaign=config.campaign)
    outcomes = []
    for criterion in config.definition.criteria:
        values = criterion_values(config=config, criterion=criterion.key, annotator_id=annotator_id)
        if not values.exists():
            continue
        table = criterion_table_load(
            config=config, criterion=criterion.key, annotator_id=annotator_id
        )
        result = criterion_qc(table=table, settings=settings, decisions={})
        test = result.qc.bad_reference
        p_value = float(test.p_value[0])
        outcomes.append(
            CriterionOutcome(
                criterion=criterion.key,
                status=result.statuses[0],
                n=int(test.n[0]),
                p_value=p_value if math.isfinite(p_value) else None,
            )
        )
    return CrowdQC(
        test=settings.qc_test,
        space=family_of_protocol(config.protocol).qc_space(settings),
        threshold=settings.threshold,
        criteria=tuple(outcomes),
    )


def completion_passes(*, rule: str, qc: CrowdQC) -> bool:
    """Whether a worker gets the pass code under the organizer's ``rule``."""
    if rule == CompletionRule.ALWAYS:
        return True
    if rule == CompletionRule.PASSED:
        return qc.status == QC_PASSED
    return qc.status != QC_FAILED
