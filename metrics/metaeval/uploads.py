"""The uploaded score files read, their system names matched, and the table computed."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from annotation.campaigns.uploads import UploadFile, decode_text
from evalcore.metaeval.scorefiles import (
    match_system_names,
    read_seg_scores,
    read_sys_scores,
    rename_systems,
)
from evalcore.metaeval.segments import SegmentMetaEvaluation, meta_evaluate_segments
from evalcore.metaeval.systems import ClusterTest, SystemMetaEvaluation, meta_evaluate_systems

# The metric is named after its file, as in mt-metrics-eval (COMET-ref-A.sys.score → COMET-ref-A).
_Scores = TypeVar("_Scores")
_SUFFIX = re.compile(r"(\.sys\.score|\.seg\.score|\.score|\.tsv|\.txt)$")


@dataclass(frozen=True)
class UploadedMetaEvaluation:
    """The system-level table (None without system-level files), the scores it was computed
    from (human ones under the metrics' names) and what the name matching found: human systems
    that no metric scores (not evaluated) and human names renamed to the metrics' (WMT's
    ``GTCOM.0`` → ``GTCOM``); and the segment-level table (None without segment-level files)
    with its own human systems that no metric scores."""

    table: SystemMetaEvaluation | None
    human: dict[str, float]
    metrics: dict[str, dict[str, float]]
    human_only: tuple[str, ...]
    renamed: dict[str, str]
    segments: SegmentMetaEvaluation | None = None
    segment_human_only: tuple[str, ...] = ()


def metric_name(file_name: str) -> str:
    return _SUFFIX.sub("", file_name.rsplit("/", 1)[-1]) or file_name


def _metric_files(
    uploads: Sequence[UploadFile], max_bytes: int, read: Callable[..., _Scores]
) -> dict[str, _Scores]:
    scores: dict[str, _Scores] = {}
    for upload in uploads:
        name = metric_name(upload.name)
        if name in scores:
            raise ValueError(f"two metric files are named {name!r}; rename one")
        scores[name] = read(upload.name, text=decode_text(upload, max_bytes=max_bytes))
    return scores


def _segment_level(
    human: UploadFile | None,
    metrics: dict[str, dict[str, list[float]]],
    *,
    human_systems: Sequence[str],
    include_human: bool,
    lower_is_better: Sequence[str],
    max_bytes: int,
    seed: int,
) -> tuple[SegmentMetaEvaluation | None, tuple[str, ...]]:
    """The segment-level table (None without metric files) and the human systems that no
    metric scores; the human names matched to the metrics' as at system level."""
    if not metrics:
        return None, ()
    if human is None:
        raise ValueError("segment-level metric files need the human segment scores")
    human_scores = read_seg_scores(human.name, text=decode_text(human, max_bytes=max_bytes))
    known = {system for scores in metrics.values() for system in scores}
    match = match_system_names(human_scores, known)
    table = meta_evaluate_segments(
        human={match.pairs[s]: v for s, v in human_scores.items() if s in match.pairs},
        metrics=metrics,
        human_systems=[match.pairs.get(s, s) for s in human_systems],
        include_human=include_human,
        lower_is_better=lower_is_better,
        rng=seed,
    )
    return table, match.human_only


def meta_evaluation_from_uploads(
    *,
    human: UploadFile | dict[str, float] | None,
    metrics: Sequence[UploadFile],
    human_systems: Sequence[str],
    include_human: bool,
    exclude_outliers: bool,
    lower_is_better: Sequence[str],
    cluster_test: ClusterTest,
    seed: int,
    max_bytes: int,
    human_segments: UploadFile | None = None,
    metric_segments: Sequence[UploadFile] = (),
) -> UploadedMetaEvaluation:
    """``human``: a .sys.score file, or the scores themselves (a criterion of the campaign), for
    the system-level ``metrics`` files; ``human_segments`` a .seg.score file for the
    segment-level ``metric_segments`` files. Either level may be left out (its table is None).
    Raises ``ValueError`` (a ``ScoreFileError`` names file and line) or ``UploadError`` with a
    message for the organizer."""
    metric_scores = _metric_files(metrics, max_bytes, read_sys_scores)
    segment_scores = _metric_files(metric_segments, max_bytes, read_seg_scores)
    unknown = [n for n in lower_is_better if n not in metric_scores and n not in segment_scores]
    if unknown:
        raise ValueError(f"lower is better names no uploaded metric: {', '.join(unknown)}")
    table: SystemMetaEvaluation | None = None
    human_named: dict[str, float] = {}
    human_only: tuple[str, ...] = ()
    renamed: dict[str, str] = {}
    if metric_scores:
        if human is None:
            raise ValueError("system-level metric files need the human system scores")
        if isinstance(human, UploadFile):
            text = decode_text(human, max_bytes=max_bytes)
            human_scores = read_sys_scores(human.name, text=text)
        else:
            human_scores = dict(human)
        known = {system for scores in metric_scores.values() for system in scores}
        match = match_system_names(human_scores, known)
        human_only, renamed = match.human_only, {h: m for h, m in match.pairs.items() if h != m}
        human_named = rename_systems(human_scores, match.pairs)
        table = meta_evaluate_systems(
            human=human_named,
            metrics=metric_scores,
            human_systems=[match.pairs.get(s, s) for s in human_systems],
            include_human=include_human,
            exclude_outliers=exclude_outliers,
            lower_is_better=[n for n in lower_is_better if n in metric_scores],
            cluster_test=cluster_test,
            rng=seed,
        )
    segments, segment_human_only = _segment_level(
        human_segments,
        segment_scores,
        human_systems=human_systems,
        include_human=include_human,
        lower_is_better=[n for n in lower_is_better if n in segment_scores],
        max_bytes=max_bytes,
        seed=seed,
    )
    return UploadedMetaEvaluation(
        table=table,
        human=human_named,
        metrics=metric_scores,
        human_only=human_only,
        renamed=renamed,
        segments=segments,
        segment_human_only=segment_human_only,
    )
