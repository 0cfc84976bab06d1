"""Real DA judgments to replay in the allocation benchmark: WMT21's Flores crowd DA
(``shared/data/wmt21-flores-da/humaneval/ad-good-raw.csv.gz``: one row per judgment of a worker
who passed QC; its SYSTEM rows are the judgments of system outputs, raw 0-100 scores; their
counts and means are the release's published N and RAW.SCR, ``ad-sys-scores-<pair>.csv``)."""

from __future__ import annotations

import gzip
import os
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from evalcore.human.allocation import Draw
from evalcore.human.judgments import FloatArray

ROOT = Path(__file__).resolve().parent.parent
PAIRS = ("bn-hi", "hi-bn", "xh-zu", "zu-xh")


def flores_folder() -> Path:
    """``shared/data/wmt21-flores-da`` beside the project, or under ``EVALSITE_SHARED_DATA``."""
    base = Path(os.environ.get("EVALSITE_SHARED_DATA", ROOT.parent / "shared" / "data"))
    folder = base / "wmt21-flores-da"
    if not folder.is_dir():
        raise SystemExit(f"{folder} is missing (set EVALSITE_SHARED_DATA)")
    return folder


def real_judgments(folder: Path, pair: str) -> dict[str, FloatArray]:
    """The raw scores of every system of ``pair`` (``bn-hi``), by the release's system id
    without its submission number, in the file's order."""
    source, target = pair.split("-")
    scores: dict[str, list[float]] = defaultdict(list)
    text = gzip.decompress((folder / "humaneval" / "ad-good-raw.csv.gz").read_bytes()).decode()
    # Columns (tabs and spaces mixed in the release): HITId WorkerId src trg item hit sys_id
    # rid type sid score time.
    for line in text.splitlines()[1:]:
        f = line.split()
        if f[2] == source and f[3] == target and f[8] == "SYSTEM":
            scores[f[6].strip('"').rsplit(".", 1)[0]].append(float(f[10]))
    return {name: np.asarray(values) for name, values in sorted(scores.items())}


def published_clusters(folder: Path, pair: str) -> dict[str, int]:
    """WMT21's published clusters of ``pair`` (``humaneval/clusters.csv``: z-scores, Wilcoxon
    rank-sum), by system, 1 the best."""
    source, target = pair.split("-")
    lines = (folder / "humaneval" / "clusters.csv").read_text().splitlines()[1:]
    starts: dict[str, int] = {}
    for f in (line.split() for line in lines):
        if f[0] == source and f[1] == target:
            starts[f[7].rsplit(".", 1)[0]] = int(f[4])
    numbers = {start: n for n, start in enumerate(sorted(set(starts.values())), start=1)}
    return {name: numbers[start] for name, start in starts.items()}


def resampled(pools: Sequence[FloatArray], rng: np.random.Generator | int | None) -> Draw:
    """Judgments drawn at random, with replacement, from each system's real ones: a campaign
    may ask for more of a system than WMT collected, and the true means are the pools'.
    ``rng``: a Generator, a seed or None."""
    generator = np.random.default_rng(rng)

    def draw(k: int, n: int) -> FloatArray:
        out: FloatArray = pools[k][generator.integers(len(pools[k]), size=n)]
        return out

    return draw
