"""Reports of the human-judgment analysis (every column is documented in ``docs/reports.md``).

- The normalised judgment report: one row per annotator × item × shown output × criterion, in a
  stable order, as CSV, TSV or JSON lines, produced as an iterator of byte chunks from chunked
  queries (a server-side cursor), so that no whole file is ever held in memory.
- The system report (scores, intervals, ranks, clusters, with the method) as CSV, JSON and
  LaTeX, and the annotator report (QC, agreement with oneself, time) as CSV, both from a
  :class:`~annotation.analysis.CampaignAnalysis`.

Annotators appear under their pseudonym (``A001``) unless an organizer asks for real names.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from django.contrib.auth import get_user_model

from annotation.analysis import (
    ITEM_TYPE_NAMES,
    KIND_CODE,
    AnalysisSettings,
    CampaignAnalysis,
    CriterionAnalysis,
    campaign_criteria,
    criterion_qc,
    criterion_table_load,
)
from annotation.models import (
    AnnotatorDecision,
    AnnotatorPseudonym,
    Campaign,
    Judgment,
    JudgmentValue,
    ProtocolConfig,
    pseudonym_code,
)

JUDGMENT_FORMATS = ("csv", "tsv", "jsonl")
SYSTEM_FORMATS = ("csv", "json", "tex")
CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "tsv": "text/tab-separated-values; charset=utf-8",
    "jsonl": "application/x-ndjson; charset=utf-8",
    "json": "application/json",
    "tex": "application/x-tex; charset=utf-8",
}

JUDGMENT_COLUMNS = (
    "campaign",
    "protocol",
    "protocol_type",
    "task",
    "item",
    "output",
    "document",
    "segment",
    "line",
    "system",
    "run",
    "annotator",
    "item_type",
    "criterion",
    "raw",
    "shifted",
    "z",
    "qc_status",
    "included",
    "started",
    "submitted",
    "seconds",
)
# The stable order: protocol configs as created, then task, item, shown output, annotator,
# criterion, and the value's id as the last tie-breaker.
JUDGMENT_ORDER = (
    "judgment__item__task__config__created",
    "judgment__item__task__config_id",
    "judgment__item__task__position",
    "judgment__item__position",
    "output__position",
    "judgment__annotator_id",
    "criterion",
    "id",
)
_QUERY_COLUMNS = (
    "id",
    "judgment__item__task__config_id",
    "judgment__item__task__position",
    "judgment__item__position",
    "output__position",
    "judgment__item__segment__document__external_id",
    "judgment__item__segment__external_id",
    "judgment__item__segment__position",
    "output__system__name",
    "output__run__name",
    "judgment__annotator_id",
    "kind_code",
    "criterion",
    "value",
    "judgment__shown_at",
    "judgment__submitted_at",
    "judgment__seconds",
)
STATUS_CODES = ("", "passed", "failed", "untested")


def annotator_labels(*, campaign: Campaign, real_names: bool = False) -> dict[int, str]:
    """``{user id: label}``: pseudonyms (A001, …; call
    :func:`annotation.analysis_services.annotator_pseudonyms_ensure` first) or usernames."""
    if real_names:
        user_model = get_user_model()
        ids = Judgment.objects.filter(item__task__config__campaign=campaign).values_list(
            "annotator_id", flat=True
        )
        return dict(
            user_model.objects.filter(pk__in=ids).values_list("pk", user_model.USERNAME_FIELD)
        )
    return {
        annotator: pseudonym_code(number)
        for annotator, number in AnnotatorPseudonym.objects.filter(campaign=campaign).values_list(
            "annotator_id", "number"
        )
    }


@dataclass(frozen=True)
class RowStatistics:
    """Per JudgmentValue id (sorted ascending): the normalised scores and the QC outcome of
    the row's annotator on the row's criterion."""

    value_ids: npt.NDArray[np.int64]
    shifted: npt.NDArray[np.float64]
    z: npt.NDArray[np.float64]
    status: npt.NDArray[np.int8]  # index into STATUS_CODES
    included: npt.NDArray[np.bool_]

    def lookup(self, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Positions of ``ids`` in this table; -1 for rows added after it was computed."""
        if self.value_ids.size == 0:
            return np.full(ids.shape, -1, dtype=np.int64)
        position = np.minimum(np.searchsorted(self.value_ids, ids), self.value_ids.size - 1)
        return np.where(self.value_ids[position] == ids, position, -1).astype(np.int64)


def judgment_row_statistics(*, campaign: Campaign, settings: AnalysisSettings) -> RowStatistics:
    """Normalised scores and QC status of every judgment value of the campaign, computed per
    protocol config and criterion by the core (``normalise`` and ``annotator_qc`` via
    :func:`annotation.analysis.criterion_qc`). Ranking criteria have no shifted or z score."""
    decisions = {d.annotator_id: d for d in AnnotatorDecision.objects.filter(campaign=campaign)}
    parts: list[tuple[Any, ...]] = []
    for config, criterion in campaign_criteria(campaign=campaign):
        table = criterion_table_load(config=config, criterion=criterion)
        verdict = criterion_qc(table=table, settings=settings, decisions=decisions)
        n = len(table.judgments)
        annotator = table.judgments.annotator
        status_of = np.array([STATUS_CODES.index(s) for s in verdict.statuses], dtype=np.int8)
        if verdict.normalised is None:
            shifted = np.full(n, np.nan)
            z = np.full(n, np.nan)
        else:
            shifted = verdict.normalised.shifted
            z = verdict.normalised.z
        parts.append(
            (
                table.value_ids,
                shifted,
                z,
                status_of[annotator] if n else np.zeros(0, np.int8),
                verdict.included[annotator] if n else np.zeros(0, bool),
            )
        )
    if not parts:
        empty = np.zeros(0)
        return RowStatistics(
            empty.astype(np.int64), empty, empty, empty.astype(np.int8), empty.astype(bool)
        )
    columns = [np.concatenate(column) for column in zip(*parts, strict=True)]
    order = np.argsort(columns[0], kind="stable")
    return RowStatistics(*(c[order] for c in columns))


def judgment_report_queryset(*, campaign: Campaign) -> Any:
    """The report's rows as tuples of :data:`_QUERY_COLUMNS`, in the stable order."""
    return (
        JudgmentValue.objects.filter(judgment__item__task__config__campaign=campaign)
        .annotate(kind_code=KIND_CODE)
        .order_by(*JUDGMENT_ORDER)
        .values_list(*_QUERY_COLUMNS)
    )


def judgment_report_rows(
    *,
    campaign: Campaign,
    settings: AnalysisSettings | None = None,
    real_names: bool = False,
    chunk_size: int = 5000,
) -> Iterator[list[tuple[Any, ...]]]:
    """The normalised judgment report as chunks of rows (tuples in :data:`JUDGMENT_COLUMNS`
    order; numbers as floats, times as datetimes, missing values as None)."""
    settings = settings or AnalysisSettings()
    statistics = judgment_row_statistics(campaign=campaign, settings=settings)
    labels = annotator_labels(campaign=campaign, real_names=real_names)
    configs = {c.pk: (c.name, c.protocol) for c in ProtocolConfig.objects.filter(campaign=campaign)}
    rows = judgment_report_queryset(campaign=campaign).iterator(chunk_size=chunk_size)
    campaign_name = campaign.name
    while True:
        chunk = []
        for _ in range(chunk_size):
            row = next(rows, None)
            if row is None:
                break
            chunk.append(row)
        if not chunk:
            return
        ids = np.fromiter((r[0] for r in chunk), dtype=np.int64, count=len(chunk))
        position = statistics.lookup(ids)
        known = position >= 0
        at = np.maximum(position, 0)
        shifted = np.where(known, statistics.shifted[at], np.nan).tolist()
        z = np.where(known, statistics.z[at], np.nan).tolist()
        status = np.where(known, statistics.status[at], 0).tolist()
        included = (known & statistics.included[at]).tolist()
        out = []
        for i, r in enumerate(chunk):
            config_name, protocol = configs[r[1]]
            out.append(
                (
                    campaign_name,
                    config_name,
                    protocol,
                    r[2] + 1,
                    r[3] + 1,
                    r[4] + 1,
                    r[5],
                    r[6],
                    r[7] + 1,
                    r[8],
                    r[9],
                    labels.get(r[10], str(r[10])),
                    ITEM_TYPE_NAMES[r[11]],
                    r[12],
                    r[13],
                    shifted[i],
                    z[i],
                    STATUS_CODES[status[i]] or None,
                    included[i],
                    r[14],
                    r[15],
                    r[16],
                )
            )
        yield out


def _text(value: Any) -> str:
    """A field as text: empty for missing and non-finite numbers, shortest round-trip repr for
    floats, ISO 8601 for times, 1/0 for booleans."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ""
    if hasattr(value, "isoformat"):
        return str(value.isoformat())
    return str(value)


def _tsv_text(value: Any) -> str:
    # TSV has no quoting: tabs and line breaks inside a field (a name from an upload) become
    # spaces so that every row stays one line of the same width.
    return _text(value).replace("\t", " ").replace("\r", " ").replace("\n", " ")


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def judgment_report_stream(
    *,
    campaign: Campaign,
    file_format: str,
    settings: AnalysisSettings | None = None,
    real_names: bool = False,
    chunk_size: int = 5000,
) -> Iterator[bytes]:
    """The normalised judgment report as UTF-8 byte chunks: a header (CSV, TSV) and one chunk
    per ``chunk_size`` rows. For ``StreamingHttpResponse`` and files alike."""
    if file_format not in JUDGMENT_FORMATS:
        raise ValueError(f"unknown report format {file_format!r}; use csv, tsv or jsonl")
    chunks = judgment_report_rows(
        campaign=campaign, settings=settings, real_names=real_names, chunk_size=chunk_size
    )
    if file_format == "jsonl":
        for chunk in chunks:
            yield "".join(
                json.dumps(
                    dict(zip(JUDGMENT_COLUMNS, map(_json_value, row), strict=True)),
                    ensure_ascii=False,
                )
                + "\n"
                for row in chunk
            ).encode()
        return
    if file_format == "tsv":
        yield ("\t".join(JUDGMENT_COLUMNS) + "\n").encode()
        for chunk in chunks:
            yield "".join("\t".join(map(_tsv_text, row)) + "\n" for row in chunk).encode()
        return
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(JUDGMENT_COLUMNS)
    yield buffer.getvalue().encode()
    for chunk in chunks:
        buffer.seek(0)
        buffer.truncate()
        writer.writerows([_text(v) for v in row] for row in chunk)
        yield buffer.getvalue().encode()


# --------------------------------------------------------------------------------------------
# System and annotator reports (small: built whole)

SYSTEM_COLUMNS = (
    "protocol",
    "protocol_type",
    "criterion",
    "system",
    "position",
    "cluster",
    "rank_low",
    "rank_high",
    "wins",
    "losses",
    "n_judgments",
    "n_segments",
    "score",
    "space",
    "mean_raw",
    "mean_shifted",
    "mean_z",
    "t_low",
    "t_high",
    "boot_low",
    "boot_high",
    "expected_wins",
    "no_worse_share",
    "trueskill_mu",
    "trueskill_sigma",
    "trueskill_rank",
    "trueskill_rank_low",
    "trueskill_rank_high",
    "significance_test",
    "alpha",
    "confidence",
    "n_bootstrap",
    "seed",
    "version",
)


def _score_space(criterion: CriterionAnalysis) -> str:
    return "expected_wins" if criterion.kind == "ranking" else str(criterion.method["space"])


def system_report_rows(analysis: CampaignAnalysis) -> Iterator[tuple[Any, ...]]:
    """One row per protocol config × criterion × system, ranked systems first."""
    for criterion in analysis.criteria:
        method = criterion.method
        n_bootstrap = method.get("n_bootstrap", method.get("trueskill_bootstrap"))
        for system in criterion.systems:
            yield (
                criterion.config_name,
                criterion.protocol,
                criterion.criterion,
                system.name,
                system.position or None,
                system.cluster or None,
                system.rank_low or None,
                system.rank_high or None,
                system.wins,
                system.losses,
                system.n_judgments,
                system.n_segments,
                system.score,
                _score_space(criterion),
                system.mean_raw,
                system.mean_shifted,
                system.mean_z,
                system.t_low,
                system.t_high,
                system.boot_low,
                system.boot_high,
                system.expected_wins,
                system.no_worse_share,
                system.trueskill_mu,
                system.trueskill_sigma,
                system.trueskill_rank,
                system.trueskill_rank_low,
                system.trueskill_rank_high,
                method["significance_test"],
                method["alpha"],
                method["confidence"],
                n_bootstrap,
                method["seed"],
                method["version"],
            )


def _csv(columns: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([_text(v) for v in row] for row in rows)
    return buffer.getvalue()


def system_report_csv(analysis: CampaignAnalysis) -> str:
    """The system report as CSV (:data:`SYSTEM_COLUMNS`)."""
    return _csv(SYSTEM_COLUMNS, system_report_rows(analysis))


def system_report_json(analysis: CampaignAnalysis) -> dict[str, Any]:
    """Systems, clusters, significance matrix, agreement and method per criterion (no
    per-annotator data: that is the annotator report)."""
    data = analysis.as_json()
    for criterion in data["criteria"]:
        criterion.pop("annotators")
    return data


LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    """Text safe inside a LaTeX table cell (system names come from uploads)."""
    return "".join(LATEX_SPECIAL.get(c, c) for c in text.replace("\n", " "))


def _fixed(value: float | None, digits: int = 3) -> str:
    return "--" if value is None else f"{value:.{digits}f}"


def system_report_latex(analysis: CampaignAnalysis) -> str:
    """One ``table``/``tabular`` per criterion in the WMT style: rank range, system, score with
    its 95% interval, raw mean and counts, a rule between clusters (needs ``booktabs``)."""
    parts = [
        "% EvalSite human evaluation: system report",
        f"% campaign {analysis.campaign_id}; {analysis.version}",
        "% \\usepackage{booktabs}",
    ]
    for criterion in analysis.criteria:
        method = criterion.method
        ranking = criterion.kind == "ranking"
        caption = (
            f"{latex_escape(criterion.config_name)}: {latex_escape(criterion.criterion_label)}. "
            + (
                "Expected Wins; clusters from the one-sided sign test"
                if ranking
                else f"mean {method['space']} score over segments with 95\\% t interval; "
                f"clusters from the one-sided {method['significance_test']} test"
            )
            + f" at $p < {method['alpha']}$; seed {method['seed']}."
        )
        if ranking:
            header = r"\# & Range & System & EW & No worse & TrueSkill $\mu$ & TS range & $n$ \\"
            spec = "rrlrrrrr"
        else:
            header = r"\# & Range & System & Score & 95\% CI & Raw & $n$ & Segs \\"
            spec = "rrlrrrrr"
        lines = [
            "",
            r"\begin{table}[t]",
            r"\centering",
            f"\\begin{{tabular}}{{{spec}}}",
            r"\toprule",
            header,
            r"\midrule",
        ]
        previous_cluster = None
        for system in criterion.ranked_systems:
            if previous_cluster is not None and system.cluster != previous_cluster:
                lines.append(r"\midrule")
            previous_cluster = system.cluster
            rank_range = (
                str(system.rank_low)
                if system.rank_low == system.rank_high
                else f"{system.rank_low}--{system.rank_high}"
            )
            name = latex_escape(system.name)
            if ranking:
                skill_range = (
                    f"{system.trueskill_rank_low}--{system.trueskill_rank_high}"
                    if system.trueskill_rank_low != system.trueskill_rank_high
                    else str(system.trueskill_rank_low)
                )
                cells = [
                    str(system.position),
                    rank_range,
                    name,
                    _fixed(system.expected_wins),
                    _fixed(system.no_worse_share),
                    _fixed(system.trueskill_mu, 2),
                    skill_range,
                    str(system.n_judgments),
                ]
            else:
                interval = (
                    "--"
                    if system.t_low is None or system.t_high is None
                    else f"[{_fixed(system.t_low)}, {_fixed(system.t_high)}]"
                )
                cells = [
                    str(system.position),
                    rank_range,
                    name,
                    _fixed(system.score),
                    interval,
                    _fixed(system.mean_raw, 1),
                    str(system.n_judgments),
                    str(system.n_segments),
                ]
            lines.append(" & ".join(cells) + r" \\")
        lines += [
            r"\bottomrule",
            r"\end{tabular}",
            f"\\caption{{{caption}}}",
            r"\end{table}",
        ]
        parts.extend(lines)
    return "\n".join(parts) + "\n"


ANNOTATOR_COLUMNS = (
    "protocol",
    "protocol_type",
    "criterion",
    "annotator",
    "n_rows",
    "qc_status",
    "qc_test",
    "qc_space",
    "qc_threshold",
    "qc_pairs",
    "qc_statistic",
    "qc_p",
    "qc_mean_difference",
    "decision",
    "decision_reason",
    "included",
    "repeats",
    "repeats_within_tolerance",
    "repeats_pearson",
    "repeat_tolerance",
    "references",
    "references_mean",
    "mean",
    "sd",
    "degenerate",
    "seconds_on_task",
    "screens",
    "screens_without_time",
    "screens_capped",
    "idle_cap",
    "version",
)


def annotator_report_rows(
    analysis: CampaignAnalysis, labels: dict[int, str]
) -> Iterator[tuple[Any, ...]]:
    """One row per protocol config × criterion × annotator."""
    for criterion in analysis.criteria:
        method = criterion.method
        ranking = criterion.kind == "ranking"
        for a in criterion.annotators:
            yield (
                criterion.config_name,
                criterion.protocol,
                criterion.criterion,
                labels.get(a.annotator_id, a.pseudonym or str(a.annotator_id)),
                a.n_rows,
                a.qc_status,
                None if ranking else method["qc_test"],
                None if ranking else method["qc_space"],
                None if ranking else method["threshold"],
                a.qc_n,
                a.qc_statistic,
                a.qc_p,
                a.qc_mean_difference,
                None if a.decision is None else ("include" if a.decision else "exclude"),
                a.decision_reason or None,
                a.included,
                a.repeats_n,
                a.repeats_share_within,
                a.repeats_pearson,
                None if ranking else method["tolerance"],
                a.references_n,
                a.references_mean,
                a.mean,
                a.sd,
                a.degenerate,
                a.time_seconds,
                a.n_screens,
                a.n_unknown_time,
                a.n_capped,
                analysis.settings.idle_cap,
                method["version"],
            )


def annotator_report_csv(analysis: CampaignAnalysis, labels: dict[int, str]) -> str:
    """The annotator report as CSV (:data:`ANNOTATOR_COLUMNS`)."""
    return _csv(ANNOTATOR_COLUMNS, annotator_report_rows(analysis, labels))


def report_filename(campaign: Campaign, report: str, extension: str) -> str:
    """``<campaign-slug>-<report>.<ext>``: ASCII only, for Content-Disposition."""
    slug = "".join(c if c.isalnum() else "-" for c in campaign.name.lower())
    slug = "-".join(part for part in slug.split("-") if part)[:40] or "campaign"
    slug = slug.encode("ascii", "ignore").decode() or "campaign"
    return f"{slug}-{report}.{extension}"
