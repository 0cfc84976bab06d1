"""Score files of mt-metrics-eval and of WMT's human evaluation, and matching their system names.

mt-metrics-eval keeps every metric's and every human score's numbers in text files, one
``system<TAB>score`` line per system (``NAME.sys.score``) or per system and segment, in segment
order (``NAME.seg.score``), ``None`` where a human score is missing. A line that is not of that
form is refused with its file and line number: a shifted column would otherwise become a wrong
correlation without any sign.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path


class ScoreFileError(ValueError):
    """A score file that cannot be read as it claims to be; the message names file and line."""


def _display_name(source: Path | str, text: str | None) -> str:
    return Path(source).name if text is None else str(source)


def _lines(source: Path | str, text: str | None) -> tuple[str, list[str]]:
    content = Path(source).read_text(encoding="utf-8") if text is None else text
    return _display_name(source, text), content.splitlines()


def _score(name: str, number: int, field: str) -> float:
    if field == "None":
        return math.nan
    try:
        value = float(field)
    except ValueError:
        raise ScoreFileError(f"{name}, line {number}: {field!r} is not a number") from None
    if not math.isfinite(value):
        raise ScoreFileError(f"{name}, line {number}: the score {field!r} is not finite")
    return value


def _rows(source: Path | str, text: str | None) -> Iterable[tuple[str, int, str, float]]:
    """(file name, line number, system, score) of every non-empty line."""
    name, lines = _lines(source, text)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        fields = line.rstrip("\r").split("\t")
        if len(fields) != 2 or not fields[0].strip():
            raise ScoreFileError(
                f"{name}, line {number}: expected 'system<TAB>score', got {len(fields)} "
                f"tab-separated field(s)"
            )
        yield name, number, fields[0].strip(), _score(name, number, fields[1].strip())


def read_sys_scores(source: Path | str, *, text: str | None = None) -> dict[str, float]:
    """A ``NAME.sys.score`` file: system → score, in file order. ``text`` reads the content
    given (``source`` then only names it in messages). A system listed twice is refused."""
    scores: dict[str, float] = {}
    for name, number, system, value in _rows(source, text):
        if system in scores:
            raise ScoreFileError(f"{name}, line {number}: system {system!r} is listed twice")
        scores[system] = value
    return scores


def read_seg_scores(source: Path | str, *, text: str | None = None) -> dict[str, list[float]]:
    """A ``NAME.seg.score`` file: system → its segment scores in segment order (NaN for None).

    Every system must have the same number of segments and its lines must be contiguous (as
    mt-metrics-eval writes them); otherwise the segments could not be aligned across systems.
    """
    scores: dict[str, list[float]] = {}
    previous = None
    for name, number, system, value in _rows(source, text):
        if system != previous and system in scores:
            raise ScoreFileError(
                f"{name}, line {number}: the lines of system {system!r} are not contiguous"
            )
        scores.setdefault(system, []).append(value)
        previous = system
    lengths = {len(values) for values in scores.values()}
    if len(lengths) > 1:
        counts = ", ".join(f"{system}: {len(values)}" for system, values in scores.items())
        raise ScoreFileError(
            f"{_display_name(source, text)}: the systems have different numbers of segments "
            f"({counts})"
        )
    return scores


_WMT_HEADER = ("RAW.SCR", "Z.SCR", "N", "SYS", "N.ALL")


def read_wmt_ad_sys_scores(
    source: Path | str, *, text: str | None = None, column: str = "Z.SCR"
) -> dict[str, float]:
    """WMT's published DA system scores (``ad-sys-scores-<pair>.csv`` of the WMT21 release:
    space-separated ``RAW.SCR Z.SCR N SYS N.ALL`` with that header): system → the ``column``
    score (``Z.SCR``, the average z, by default; ``RAW.SCR`` the raw average)."""
    if column not in ("RAW.SCR", "Z.SCR"):
        raise ValueError(f"column must be RAW.SCR or Z.SCR, got {column!r}")
    name, lines = _lines(source, text)
    if not lines or tuple(lines[0].split()) != _WMT_HEADER:
        raise ScoreFileError(f"{name}, line 1: expected the header {' '.join(_WMT_HEADER)}")
    at = _WMT_HEADER.index(column)
    scores: dict[str, float] = {}
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != len(_WMT_HEADER):
            raise ScoreFileError(
                f"{name}, line {number}: expected {len(_WMT_HEADER)} fields, got {len(fields)}"
            )
        system = fields[3]
        if system in scores:
            raise ScoreFileError(f"{name}, line {number}: system {system!r} is listed twice")
        scores[system] = _score(name, number, fields[at])
    return scores


# WMT's human evaluation names a submission "<team>.<submission id>" (GTCOM.0); metric score
# files name the team only (GTCOM).
_SUBMISSION_ID = re.compile(r"\.\d+$")


@dataclass(frozen=True)
class NameMatch:
    """Human system name → metric system name for every matched system, and the names of
    either side that found no partner (reported, never silently dropped)."""

    pairs: dict[str, str]
    human_only: tuple[str, ...]
    metric_only: tuple[str, ...]


def match_system_names(human: Iterable[str], metric: Iterable[str]) -> NameMatch:
    """Pair human and metric system names: the same name, or else the human name without WMT's
    trailing submission id (``GTCOM.0`` → ``GTCOM``) when exactly one human name strips to it."""
    human_names = list(dict.fromkeys(human))
    metric_names = set(metric)
    pairs: dict[str, str] = {h: h for h in human_names if h in metric_names}
    stripped: dict[str, list[str]] = {}
    for h in human_names:
        if h not in pairs:
            stripped.setdefault(_SUBMISSION_ID.sub("", h), []).append(h)
    taken = set(pairs.values())
    for base, names in stripped.items():
        if len(names) == 1 and base in metric_names and base not in taken:
            pairs[names[0]] = base
            taken.add(base)
    return NameMatch(
        pairs=pairs,
        human_only=tuple(h for h in human_names if h not in pairs),
        metric_only=tuple(sorted(metric_names - taken)),
    )


def rename_systems(scores: Mapping[str, float], pairs: Mapping[str, str]) -> dict[str, float]:
    """The human scores under the metric side's names, for the matched systems only."""
    return {pairs[system]: value for system, value in scores.items() if system in pairs}
