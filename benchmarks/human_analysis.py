"""Benchmark of the human-judgment analysis: 1,000,000 judgments analysed end to end.

    .venv/bin/python benchmarks/human_analysis.py            # the figures in docs/benchmarks.md
    .venv/bin/python benchmarks/human_analysis.py --rankings # plus a ranking campaign (TrueSkill)

A deterministic synthetic direct-assessment campaign (200 annotators, 20 systems + the reference,
5,000 segments, tasks of 100 items with 10 bad references, 5 repeats and 5 references; two careless
annotators) goes through every stage of ``evalcore.human``: QC tests, normalisation, system
scores with t and 1,000-resample bootstrap intervals, pairwise significance (Wilcoxon and a
1,000-resample paired bootstrap), WMT clusters and agreement. Prints the time per stage and the
peak resident memory (``resource.getrusage``). Target: ≤ 30 s and ≤ 2 GB on the 2-core machine.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalcore.human.agreement import (
    Alpha,
    inter_annotator_alpha,
    intra_annotator_alpha,
    ranking_kappa,
)
from evalcore.human.judgments import ItemType, Judgments
from evalcore.human.normalisation import normalise
from evalcore.human.qc import (
    TOLERANCE_0_TO_100,
    AnnotatorQC,
    annotator_qc,
    bad_reference_test,
)
from evalcore.human.rankings import (
    expected_wins,
    no_worse_than_others,
    pairwise_comparisons,
    trueskill_ranking,
)
from evalcore.human.synthetic import synthetic_rankings, synthetic_scores
from evalcore.human.systems import (
    Clusters,
    comparison_significance,
    pairwise_significance,
    system_scores,
    wmt_clusters,
)

T = TypeVar("T")
CARELESS = (17, 123)


def emit(line: str = "") -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def peak_rss_mb() -> float:
    # ru_maxrss is in kilobytes on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Stages:
    """Times each stage and prints one line per stage."""

    def __init__(self) -> None:
        self.total = 0.0
        emit(f"{'stage':<58} {'seconds':>8} {'peak RSS MB':>12}")

    def run(self, name: str, work: Callable[[], T]) -> T:
        start = time.perf_counter()
        result = work()
        elapsed = time.perf_counter() - start
        self.total += elapsed
        emit(f"{name:<58} {elapsed:8.2f} {peak_rss_mb():12.0f}")
        return result


def score_campaign(n_bootstrap: int, seed: int) -> float:
    stages = Stages()
    campaign = stages.run(
        "synthetic data (1,000,000 judgments, not analysis)",
        lambda: synthetic_scores(
            n_annotators=200,
            n_systems=20,
            n_segments=5000,
            tasks_per_annotator=50,
            careless=list(CARELESS),
            # Adjacent systems 0.2 points apart on 0-100: close enough for clusters to form.
            quality_spread=4.0,
            seed=seed,
        ),
    )
    judgments = campaign.judgments
    generation = stages.total
    qc = stages.run(
        "QC: paired t, repeats, references, time on task",
        lambda: annotator_qc(judgments, tolerance=TOLERANCE_0_TO_100),
    )
    stages.run(
        "QC: Wilcoxon signed-rank per annotator",
        lambda: bad_reference_test(judgments, test="wilcoxon"),
    )
    stages.run(
        "QC: Mann-Whitney U per annotator",
        lambda: bad_reference_test(judgments, test="mannwhitney"),
    )
    stages.run("QC: paired t on z-scores", lambda: bad_reference_test(judgments, space="z"))
    normalised = stages.run("normalisation: mean shift and z", lambda: normalise(judgments))
    systems = stages.run(
        f"system scores, t and bootstrap CIs ({n_bootstrap} resamples)",
        lambda: system_scores(
            judgments, normalised, include=qc.passed, n_bootstrap=n_bootstrap, rng=seed
        ),
    )
    wilcoxon = stages.run(
        "pairwise Wilcoxon signed-rank, 21 x 20 pairs",
        lambda: pairwise_significance(systems.segments, test="wilcoxon"),
    )
    bootstrap = stages.run(
        f"pairwise paired bootstrap ({n_bootstrap} resamples)",
        lambda: pairwise_significance(
            systems.segments, test="bootstrap", n_samples=n_bootstrap, rng=seed
        ),
    )
    clusters = stages.run(
        "WMT clusters (Wilcoxon and bootstrap)",
        lambda: (wmt_clusters(systems.score, wilcoxon), wmt_clusters(systems.score, bootstrap)),
    )
    inter = stages.run(
        "inter-annotator alpha, interval and ordinal",
        lambda: (
            inter_annotator_alpha(judgments, level="interval"),
            inter_annotator_alpha(judgments, level="ordinal"),
        ),
    )
    intra = stages.run("intra-annotator alpha (repeats)", lambda: intra_annotator_alpha(judgments))
    analysis = stages.total - generation
    emit(f"{'analysis total (without synthetic data)':<58} {analysis:8.2f} {peak_rss_mb():12.0f}")
    emit()
    score_summary(judgments, qc, inter, intra, clusters)
    return analysis


def score_summary(
    judgments: Judgments,
    qc: AnnotatorQC,
    inter: tuple[Alpha, Alpha],
    intra: Alpha,
    clusters: tuple[Clusters, Clusters],
) -> None:
    """What the analysis found: the annotators failing QC, agreement, ranking and clusters."""
    failed = np.flatnonzero(~qc.passed).tolist()
    emit(f"judgments: {len(judgments):,}; failed QC: annotators {failed}")
    p = qc.bad_reference.p_value
    careless = list(CARELESS)
    emit(
        f"careless annotators {careless}: paired-t p = {np.round(p[careless], 4).tolist()}; "
        f"largest p of a diligent annotator: {np.delete(p, careless).max():.2e}"
    )
    real = int(judgments.rows_of(ItemType.REAL).sum())
    emit(f"real judgments: {real:,}; units with >= 2 annotators: {inter[0].n_units:,}")
    emit(
        f"alpha interval {inter[0].alpha:.3f}, ordinal {inter[1].alpha:.3f}, "
        f"intra {intra.alpha:.3f} ({intra.n_units:,} repeat pairs)"
    )
    order = clusters[0].order[:20]
    emit(f"ranking (z): {order.tolist()}")
    emit(f"clusters (Wilcoxon): {clusters[0].cluster[order].tolist()}")
    emit(f"clusters (bootstrap): {clusters[1].cluster[order].tolist()}")


def ranking_campaign(n_bootstrap: int, seed: int) -> None:
    stages = Stages()
    campaign = stages.run(
        "synthetic rankings (25,000 judgments, 5,000 screens of 5)",
        lambda: synthetic_rankings(
            n_annotators=50,
            n_systems=20,
            n_segments=5000,
            screens_per_annotator=100,
            careless=[3],
            seed=seed,
        ),
    )
    judgments = campaign.judgments
    comparisons = stages.run("pairwise comparisons", lambda: pairwise_comparisons(judgments))
    real = comparisons.select(comparisons.item_type == ItemType.REAL)
    wins = stages.run("Expected Wins", lambda: expected_wins(real))
    stages.run("no worse than others", lambda: no_worse_than_others(judgments))
    stages.run(
        "sign-test clusters", lambda: wmt_clusters(wins.score, comparison_significance(wins.counts))
    )
    stages.run(
        "kappa inter and intra",
        lambda: (ranking_kappa(comparisons), ranking_kappa(comparisons, kind="intra")),
    )
    stages.run(
        f"TrueSkill, {len(real):,} comparisons x {n_bootstrap + 1} runs",
        lambda: trueskill_ranking(real, n_bootstrap=n_bootstrap, rng=seed),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", type=int, default=1000, help="resamples (default 1000)")
    parser.add_argument("--seed", type=int, default=2024, help="seed of data and resampling")
    parser.add_argument(
        "--rankings", action="store_true", help="also time a ranking campaign with TrueSkill"
    )
    parser.add_argument(
        "--trueskill-runs", type=int, default=1000, help="TrueSkill runs (default 1000)"
    )
    args = parser.parse_args()
    emit(f"numpy {np.__version__}; seed {args.seed}")
    emit()
    analysis = score_campaign(args.bootstrap, args.seed)
    if args.rankings:
        emit()
        ranking_campaign(args.trueskill_runs, args.seed)
    emit()
    emit(f"peak RSS: {peak_rss_mb():.0f} MB; score analysis: {analysis:.1f} s")


if __name__ == "__main__":
    main()
