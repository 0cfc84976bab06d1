"""The uploaded score files read, their system names matched, and the table computed."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from annotation.campaigns.uploads import UploadFile, decode_text
from evalcore.metaeval.scorefiles import match_system_names, read_sys_scores, rename_systems
from evalcore.metaeval.systems import ClusterTest, SystemMetaEvaluation, meta_evaluate_systems

# The metric is named after its file, as in mt-metrics-eval (COMET-ref-A.sys.score → COMET-ref-A).
_SUFFIX = re.compile(r"(\.sys\.score|\.score|\.tsv|\.txt)$")


@dataclass(frozen=True)
class UploadedMetaEvaluation:
    """The table, the scores it was computed from (human ones under the metrics' names) and
    what the name matching found: human systems that no metric scores (not evaluated) and human
    names renamed to the metrics' (WMT's ``GTCOM.0`` → ``GTCOM``)."""

    table: SystemMetaEvaluation
    human: dict[str, float]
    metrics: dict[str, dict[str, float]]
    human_only: tuple[str, ...]
    renamed: dict[str, str]


def metric_name(file_name: str) -> str:
    return _SUFFIX.sub("", file_name.rsplit("/", 1)[-1]) or file_name


def meta_evaluation_from_uploads(
    *,
    human: UploadFile | dict[str, float],
    metrics: Sequence[UploadFile],
    human_systems: Sequence[str],
    include_human: bool,
    exclude_outliers: bool,
    lower_is_better: Sequence[str],
    cluster_test: ClusterTest,
    seed: int,
    max_bytes: int,
) -> UploadedMetaEvaluation:
    """``human``: a .sys.score file, or the scores themselves (a criterion of the campaign).
    Raises ``ValueError`` (a ``ScoreFileError`` names file and line) or ``UploadError`` with a
    message for the organizer."""
    if isinstance(human, UploadFile):
        human_scores = read_sys_scores(human.name, text=decode_text(human, max_bytes=max_bytes))
    else:
        human_scores = dict(human)
    metric_scores: dict[str, dict[str, float]] = {}
    for upload in metrics:
        name = metric_name(upload.name)
        if name in metric_scores:
            raise ValueError(f"two metric files are named {name!r}; rename one")
        text = decode_text(upload, max_bytes=max_bytes)
        metric_scores[name] = read_sys_scores(upload.name, text=text)
    known = {system for scores in metric_scores.values() for system in scores}
    match = match_system_names(human_scores, known)
    renamed = {h: m for h, m in match.pairs.items() if h != m}
    human_named = rename_systems(human_scores, match.pairs)
    table = meta_evaluate_systems(
        human=human_named,
        metrics=metric_scores,
        human_systems=[match.pairs.get(s, s) for s in human_systems],
        include_human=include_human,
        exclude_outliers=exclude_outliers,
        lower_is_better=lower_is_better,
        cluster_test=cluster_test,
        rng=seed,
    )
    return UploadedMetaEvaluation(
        table=table,
        human=human_named,
        metrics=metric_scores,
        human_only=match.human_only,
        renamed=renamed,
    )
