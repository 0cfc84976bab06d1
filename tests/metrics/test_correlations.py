"""What ``metrics.correlations`` assembles, recomputed here from the database by other means.

The demo's data and protocols (adequacy and fluency, ranking, direct assessment; 4 systems × 3
runs, 60 segments) are judged by the demo's simulated raters and the real pipeline runs in this
process. The stored correlation document is then checked against references computed in this
file from the judgments and the texts: sacreBLEU's corpus and sentence scores, per-annotator
z-scores and Expected Wins written out in plain Python, scipy's coefficients, numpy's polyfit,
pair counts by hand, and a bootstrap replayed from the seed with its own code. The human
analysis document only says which annotators were included (the QC decision) and gives the
human points the table shows.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import sacrebleu
from django.db import transaction
from scipy import stats as sps

from annotation.models import (
    Campaign,
    ItemKind,
    JudgmentValue,
    ProtocolConfig,
    Reference,
    Segment,
    Translation,
)
from evalcore.scoring import make_metric
from evalcore.stats.correlation import pearson, williams_test
from metrics.models import AnalysisJob, AnalysisResult
from tests.dashboard_factories import analysis_run_sync, make_judged_demo_campaign
from tests.factories import make_user

pytestmark = pytest.mark.django_db

METRICS = ("bleu", "chrf", "ter")
SENTENCE = {
    "bleu": lambda h, r: sacrebleu.sentence_bleu(h, r).score,
    "chrf": lambda h, r: sacrebleu.sentence_chrf(h, r).score,
    "ter": lambda h, r: sacrebleu.sentence_ter(h, r).score,
}
CORPUS = {
    "bleu": lambda h, r: sacrebleu.corpus_bleu(h, r).score,
    "chrf": lambda h, r: sacrebleu.corpus_chrf(h, r).score,
    "ter": lambda h, r: sacrebleu.corpus_ter(h, r).score,
}


@dataclass
class Judged:
    campaign: Campaign
    job: AnalysisJob
    correlations: dict[str, Any]
    human: dict[str, Any]
    metrics: dict[str, Any]
    segments: list[int]  # segment ids in campaign order
    hyps: dict[int, list[str]]  # run id → hypotheses in campaign order
    refs: list[list[str]]  # reference streams
    run_system: dict[int, int]  # run id → system id


@pytest.fixture(scope="module")
def judged(django_db_setup, django_db_blocker) -> Iterator[Judged]:  # type: ignore[no-untyped-def]
    with django_db_blocker.unblock(), transaction.atomic():
        owner = make_user("corr-owner", organizer=True)
        campaign = make_judged_demo_campaign(owner=owner)
        job = analysis_run_sync(campaign=campaign, user=owner, metrics=METRICS)
        docs = {r.kind: r.data for r in AnalysisResult.objects.filter(job=job)}
        segments = list(
            Segment.objects.filter(campaign=campaign)
            .order_by("position")
            .values_list("pk", flat=True)
        )
        hyps: dict[int, list[str]] = defaultdict(list)
        run_system: dict[int, int] = {}
        for run_id, system_id, text in (
            Translation.objects.filter(run__system__campaign=campaign)
            .order_by("run_id", "segment__position")
            .values_list("run_id", "run__system_id", "text")
        ):
            hyps[run_id].append(text)
            run_system[run_id] = system_id
        streams: dict[int, list[str]] = defaultdict(list)
        for index, text in (
            Reference.objects.filter(segment__campaign=campaign)
            .order_by("index", "segment__position")
            .values_list("index", "text")
        ):
            streams[index].append(text)
        yield Judged(
            campaign=campaign,
            job=job,
            correlations=docs[AnalysisResult.Kind.CORRELATIONS],
            human=docs[AnalysisResult.Kind.HUMAN],
            metrics=docs[AnalysisResult.Kind.METRICS],
            segments=segments,
            hyps=dict(hyps),
            refs=[streams[i] for i in sorted(streams)],
            run_system=run_system,
        )
        transaction.set_rollback(True)


# --------------------------------------------------------------------------------------------
# References computed here


@dataclass
class Row:
    annotator: int
    kind: str
    run: int | None
    system: int | None
    segment: int
    screen: int
    value: float


def rows_of(criterion: dict[str, Any]) -> list[Row]:
    config = ProtocolConfig.objects.get(pk=criterion["config_id"])
    return [
        Row(*values)
        for values in JudgmentValue.objects.filter(
            judgment__item__task__config=config, criterion=criterion["criterion"]
        )
        .order_by("pk")
        .values_list(
            "judgment__annotator_id",
            "output__kind",
            "output__run_id",
            "output__system_id",
            "judgment__item__segment_id",
            "judgment_id",
            "value",
        )
    ]


def included(criterion: dict[str, Any]) -> set[int]:
    return {a["annotator_id"] for a in criterion["annotators"] if a["included"]}


def z_scores(rows: list[Row]) -> list[float]:
    """z = (x − μ_a) / σ_a with μ_a, σ_a (n − 1) over the annotator's REAL and REPEAT rows."""
    basis: dict[int, list[float]] = defaultdict(list)
    for row in rows:
        if row.kind in (ItemKind.REAL, ItemKind.REPEAT):
            basis[row.annotator].append(row.value)
    moments = {
        a: (float(np.mean(v)), float(np.std(v, ddof=1)) if len(v) > 1 else 0.0)
        for a, v in basis.items()
    }
    out = []
    for row in rows:
        mean, sd = moments.get(row.annotator, (math.nan, 0.0))
        out.append((row.value - mean) / sd if sd > 0 else math.nan)
    return out


def translation_means(criterion: dict[str, Any], values: str) -> dict[tuple[int, int], float]:
    """Mean z (or raw) score per translation (run, segment) over the REAL and REPEAT judgments
    of included annotators — the judgments that enter a system's human score."""
    rows = rows_of(criterion)
    z = z_scores(rows)
    keep = included(criterion)
    sums: dict[tuple[int, int], list[float]] = defaultdict(list)
    for row, zi in zip(rows, z, strict=True):
        if row.run is None or row.annotator not in keep or not math.isfinite(zi):
            continue
        if row.kind in (ItemKind.REAL, ItemKind.REPEAT):
            sums[(row.run, row.segment)].append(zi if values == "z" else row.value)
    return {k: float(np.mean(v)) for k, v in sums.items()}


def sentence_score(judged: Judged, metric: str, run: int, segment: int) -> float:
    i = judged.segments.index(segment)
    refs = [stream[i] for stream in judged.refs]
    return float(SENTENCE[metric](judged.hyps[run][i], refs))


def corpus_point(judged: Judged, metric: str, system_id: int) -> float:
    """Mean over the system's runs of sacreBLEU's corpus score."""
    runs = sorted(r for r, s in judged.run_system.items() if s == system_id)
    return float(np.mean([CORPUS[metric](judged.hyps[r], judged.refs) for r in runs]))


def segment_win_counts(criterion: dict[str, Any], judged: Judged) -> dict[int, dict]:
    """Per segment: wins[(a, b)] = REAL comparisons of included annotators on one screen where
    system a was ranked better (lower rank) than system b."""
    keep = included(criterion)
    screens: dict[int, list[Row]] = defaultdict(list)
    for row in rows_of(criterion):
        screens[row.screen].append(row)
    wins: dict[int, dict[tuple[int, int], int]] = defaultdict(lambda: defaultdict(int))
    for screen in screens.values():
        for x, y in itertools.combinations(screen, 2):
            if x.annotator not in keep or x.kind != ItemKind.REAL or y.kind != ItemKind.REAL:
                continue
            if x.system == y.system or x.value == y.value:
                continue
            better, worse = (x, y) if x.value < y.value else (y, x)
            wins[x.segment][(better.system, worse.system)] += 1
    return wins


def expected_wins(wins: dict[tuple[int, int], float], systems: list[int]) -> list[float]:
    """Koehn (2012): mean over opponents with a decided comparison of wins / (wins + losses)."""
    out = []
    for a in systems:
        shares = []
        for b in {b for (x, b) in wins if x == a} | {x for (x, b) in wins if b == a}:
            decided = wins.get((a, b), 0) + wins.get((b, a), 0)
            if decided:
                shares.append(wins.get((a, b), 0) / decided)
        out.append(sum(shares) / len(shares) if shares else math.nan)
    return out


def sign(x: float) -> int:
    return (x > 0) - (x < 0)


def criteria(judged: Judged) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(correlation criterion, human criterion) pairs."""
    human = {(c["config_id"], c["criterion"]): c for c in judged.human["analysis"]["criteria"]}
    return [(c, human[(c["config_id"], c["criterion"])]) for c in judged.correlations["criteria"]]


def system_entries(judged: Judged) -> Iterator[tuple[dict, dict, dict]]:
    for crit, human in criteria(judged):
        for entry in crit["metrics"]:
            if "system" in entry:
                yield crit, human, entry


# --------------------------------------------------------------------------------------------
# Tests


def test_every_criterion_and_metric_has_system_and_segment_level_numbers(judged) -> None:  # type: ignore[no-untyped-def]
    kinds = {(c["criterion"], c["kind"]) for c in judged.correlations["criteria"]}
    assert {("adequacy", "scores"), ("fluency", "scores"), ("rank", "ranking")} <= kinds
    assert any(k == "scores" and c != "adequacy" and c != "fluency" for c, k in kinds)  # DA
    for crit in judged.correlations["criteria"]:
        assert [e["key"] for e in crit["metrics"]] == list(METRICS)
        for entry in crit["metrics"]:
            assert entry["system"]["n"] == 4
            assert entry["segment"]


def test_the_points_are_the_human_analysis_scores_and_sacrebleus_corpus_scores(judged) -> None:  # type: ignore[no-untyped-def]
    for crit, human, entry in system_entries(judged):
        orient = -1.0 if entry["key"] == "ter" else 1.0
        assert entry["oriented"] is (entry["key"] == "ter")
        by_id = {s["system_id"]: s for s in human["systems"]}
        for p in entry["system"]["points"]:
            field = "expected_wins" if crit["kind"] == "ranking" else "score"
            assert p["human"] == by_id[p["system_id"]][field]
            # TER is lower-is-better: negated, as documented, so agreement is positive.
            reference = orient * corpus_point(judged, entry["key"], p["system_id"])
            assert p["metric"] == pytest.approx(reference, abs=1e-9)


# The space a kind's systems are ranked in by default: raw points for ESA and MQM (as WMT and
# Google rank them), z for the others (as WMT ranks direct assessment).
DEFAULT_SPACE = {"esa": "raw", "mqm": "raw"}


def test_score_criteria_points_are_mean_segment_scores_over_real_and_repeat_judgments(
    judged,
) -> None:  # type: ignore[no-untyped-def]
    spaces = set()
    for crit, human in criteria(judged):
        if crit["kind"] != "scores":
            continue
        space = DEFAULT_SPACE.get(human["protocol"], "z")
        spaces.add(space)
        assert human["method"]["space"] == space
        means = translation_means(human, space)
        # A system's segment score pools its runs' judgments on the segment.
        per_segment: dict[tuple[int, int], list[float]] = defaultdict(list)
        rows = rows_of(human)
        z = z_scores(rows)
        keep = included(human)
        for row, zi in zip(rows, z, strict=True):
            if (
                row.annotator in keep
                and row.kind in (ItemKind.REAL, ItemKind.REPEAT)
                and (space == "raw" or math.isfinite(zi))
            ):
                per_segment[(row.system, row.segment)].append(zi if space == "z" else row.value)
        assert means  # the per-translation table is not empty either
        for s in human["systems"]:
            if s["score"] is None:
                continue
            segment_means = [np.mean(v) for (y, _), v in per_segment.items() if y == s["system_id"]]
            assert s["score"] == pytest.approx(float(np.mean(segment_means)), abs=1e-12)
    assert spaces == {"z", "raw"}  # both kinds of criteria were checked


def test_ranking_points_are_expected_wins_of_real_comparisons(judged) -> None:  # type: ignore[no-untyped-def]
    for crit, human in criteria(judged):
        if crit["kind"] != "ranking":
            continue
        total: dict[tuple[int, int], int] = defaultdict(int)
        for per_segment in segment_win_counts(human, judged).values():
            for pair, count in per_segment.items():
                total[pair] += count
        ids = [s["system_id"] for s in human["systems"] if s["position"] > 0]
        ours = {s["system_id"]: s["expected_wins"] for s in human["systems"]}
        for system_id, reference in zip(ids, expected_wins(total, ids), strict=True):
            assert ours[system_id] == pytest.approx(reference, abs=1e-12)


def test_system_level_coefficients_are_scipys_on_the_same_vectors(judged) -> None:  # type: ignore[no-untyped-def]
    checked = 0
    for _, _, entry in system_entries(judged):
        system = entry["system"]
        h = [p["human"] for p in system["points"]]
        m = [p["metric"] for p in system["points"]]
        assert system["pearson"]["value"] == pytest.approx(sps.pearsonr(h, m)[0], abs=1e-9)
        assert system["spearman"]["value"] == pytest.approx(sps.spearmanr(h, m)[0], abs=1e-9)
        assert system["kendall"]["value"] == pytest.approx(sps.kendalltau(h, m)[0], abs=1e-9)
        checked += 1
    assert checked == len(judged.correlations["criteria"]) * len(METRICS)


def test_pairwise_accuracy_counts_the_pairs_ordered_alike(judged) -> None:  # type: ignore[no-untyped-def]
    for _, _, entry in system_entries(judged):
        points = entry["system"]["points"]
        agree = total = 0
        for p, q in itertools.combinations(points, 2):
            total += 1
            agree += sign(p["human"] - q["human"]) == sign(p["metric"] - q["metric"])
        assert entry["system"]["pairwise_accuracy"] == pytest.approx(agree / total)


def test_the_fitted_line_is_numpys_polyfit_of_human_on_metric(judged) -> None:  # type: ignore[no-untyped-def]
    for _, _, entry in system_entries(judged):
        points = entry["system"]["points"]
        slope, intercept = np.polyfit(
            [p["metric"] for p in points], [p["human"] for p in points], 1
        )
        assert entry["system"]["fit"]["slope"] == pytest.approx(slope, rel=1e-9)
        assert entry["system"]["fit"]["intercept"] == pytest.approx(intercept, rel=1e-9)


def test_the_williams_p_values_are_the_core_test_on_scipy_correlations(judged) -> None:  # type: ignore[no-untyped-def]
    for crit in judged.correlations["criteria"]:
        williams = crit["williams"]
        assert williams["metrics"] == list(METRICS)
        points = {
            e["key"]: (
                [p["human"] for p in e["system"]["points"]],
                [p["metric"] for p in e["system"]["points"]],
            )
            for e in crit["metrics"]
        }
        for i, a in enumerate(williams["metrics"]):
            for k, b in enumerate(williams["metrics"]):
                if a == b:
                    assert williams["p"][i][k] is None
                    continue
                human, ma = points[a]
                _, mb = points[b]
                scipy_r = (
                    sps.pearsonr(human, ma)[0],
                    sps.pearsonr(human, mb)[0],
                    sps.pearsonr(ma, mb)[0],
                )
                # Our correlations are scipy's to the last bits.
                assert [
                    pearson(human, ma),
                    pearson(human, mb),
                    pearson(ma, mb),
                ] == pytest.approx(scipy_r, rel=1e-15, abs=1e-15)
                # Williams' test divides by the determinant |R| = 1 − r12² − r13² − r23² +
                # 2·r12·r13·r23, computed with an absolute rounding error of a few ε: with four
                # systems and two metrics correlating to 1 − 5e-6, |R| ≈ 1e-7 and a last-bit
                # change of an r moves p by up to ≈ ε/|R| ≈ 2e-9. So p agrees to 1e-9 or, where |R|
                # is that small, to what its rounding allows.
                r12, r13, r23 = scipy_r
                det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
                tolerance = max(1e-9, 8 * np.finfo(float).eps / abs(det))
                expected = williams_test(r12, r13, r23, len(human)).p_value
                assert williams["p"][i][k] == pytest.approx(expected, abs=tolerance)


def test_segment_level_pearson_on_z_is_scipys_on_sacrebleu_sentence_scores(judged) -> None:  # type: ignore[no-untyped-def]
    checked = 0
    for crit, human in criteria(judged):
        if crit["kind"] != "scores":
            continue
        means = translation_means(human, "z")
        keys = sorted(means)
        for entry in crit["metrics"]:
            orient = -1.0 if entry["key"] == "ter" else 1.0
            metric = [orient * sentence_score(judged, entry["key"], r, s) for r, s in keys]
            expected = sps.pearsonr([means[k] for k in keys], metric)[0]
            stored = entry["segment"]["pearson_z"]
            assert stored["n"] == len(keys)
            assert stored["value"] == pytest.approx(expected, abs=1e-9)
            checked += 1
    assert checked >= 3 * len(METRICS)


def test_the_darr_tau_of_direct_assessment_counts_pairs_25_points_apart(judged) -> None:  # type: ignore[no-untyped-def]
    found = False
    for crit, human in criteria(judged):
        if crit["kind"] != "scores":
            continue
        if human["scale"][1] - human["scale"][0] <= 10:
            assert all("darr" not in e["segment"] for e in crit["metrics"])  # no DA pairs on 1–5
            continue
        found = True
        raw = translation_means(human, "raw")
        for entry in crit["metrics"]:
            orient = -1.0 if entry["key"] == "ter" else 1.0
            concordant = discordant = 0
            for (r1, s1), (r2, s2) in itertools.combinations(sorted(raw), 2):
                if s1 != s2 or abs(raw[(r1, s1)] - raw[(r2, s2)]) <= 25:
                    continue
                dh = raw[(r1, s1)] - raw[(r2, s2)]
                dm = orient * (
                    sentence_score(judged, entry["key"], r1, s1)
                    - sentence_score(judged, entry["key"], r2, s2)
                )
                if dm != 0 and (dh > 0) == (dm > 0):
                    concordant += 1
                else:
                    discordant += 1  # a metric tie is discordant (WMT)
            darr = entry["segment"]["darr"]
            assert (darr["concordant"], darr["discordant"]) == (concordant, discordant)
            if not concordant + discordant:
                # MQM's scores (minus weighted errors) are rarely 25 apart: no pairs, no τ.
                assert darr["tau"] is None
                continue
            assert darr["tau"] == pytest.approx(
                (concordant - discordant) / (concordant + discordant)
            )
    assert found


def test_the_darr_tau_of_rankings_counts_pairs_ranked_apart_on_one_screen(judged) -> None:  # type: ignore[no-untyped-def]
    for crit, human in criteria(judged):
        if crit["kind"] != "ranking":
            continue
        keep = included(human)
        screens: dict[int, list[Row]] = defaultdict(list)
        for row in rows_of(human):
            if row.annotator in keep and row.kind == ItemKind.REAL and row.run is not None:
                screens[row.screen].append(row)
        for entry in crit["metrics"]:
            orient = -1.0 if entry["key"] == "ter" else 1.0
            concordant = discordant = 0
            for screen in screens.values():
                for x, y in itertools.combinations(screen, 2):
                    if x.value == y.value:
                        continue
                    dh = y.value - x.value  # rank 1 is best: x better when its rank is lower
                    dm = orient * (
                        sentence_score(judged, entry["key"], x.run, x.segment)
                        - sentence_score(judged, entry["key"], y.run, y.segment)
                    )
                    if dm != 0 and (dh > 0) == (dm > 0):
                        concordant += 1
                    else:
                        discordant += 1
            darr = entry["segment"]["darr"]
            assert (darr["concordant"], darr["discordant"]) == (concordant, discordant)
            assert concordant + discordant > 50


def test_every_bootstrap_interval_contains_its_point_estimate(judged) -> None:  # type: ignore[no-untyped-def]
    for _, _, entry in system_entries(judged):
        for method in ("pearson", "spearman", "kendall"):
            r = entry["system"][method]
            assert r["low"] <= r["value"] <= r["high"], (entry["key"], method, r)


def _replayed_human_side(
    judged: Judged, crit: dict[str, Any], human: dict[str, Any], systems: list[int]
) -> Callable[[np.ndarray], list[float]]:
    """The human score of each system under a resample's segment weights: expected wins from
    the win counts per segment (ranking), or the mean score of the system's segments in the
    kind's default space (z, raw points for ESA and MQM)."""
    segments = judged.segments
    n = len(segments)
    if crit["kind"] == "ranking":
        per_segment = segment_win_counts(human, judged)

        def human_of(weights: np.ndarray) -> list[float]:
            total: dict[tuple[int, int], float] = defaultdict(float)
            for s, pairs in per_segment.items():
                w = weights[segments.index(s)]
                for pair, c in pairs.items():
                    total[pair] += w * c
            return expected_wins({p: v for p, v in total.items() if v}, systems)

    else:
        space = DEFAULT_SPACE.get(human["protocol"], "z")
        rows, keep = rows_of(human), included(human)
        z = z_scores(rows)
        cell: dict[tuple[int, int], list[float]] = defaultdict(list)
        for row, zi in zip(rows, z, strict=True):
            if (
                row.annotator in keep
                and row.kind in (ItemKind.REAL, ItemKind.REPEAT)
                and (space == "raw" or math.isfinite(zi))
            ):
                cell[(row.system, row.segment)].append(zi if space == "z" else row.value)
        score = np.zeros((len(systems), n))
        present = np.zeros((len(systems), n))
        for (y, s), v in cell.items():
            if y in systems:
                score[systems.index(y), segments.index(s)] = np.mean(v)
                present[systems.index(y), segments.index(s)] = 1.0

        def human_of(weights: np.ndarray) -> list[float]:
            return list((score @ weights) / (present @ weights))

    return human_of


def _replayed_interval(
    judged: Judged, crit: dict[str, Any], human: dict[str, Any], key: str
) -> dict[str, tuple[float, float]]:
    """The system-level bootstrap replayed with this file's own statistics: the resamples are
    ``default_rng(seed).choice(n, size=(samples, n))`` (sacreBLEU's draw, which the core
    documents), the human side is recomputed per resample from per-segment scores or win
    counts, the metric side is the corpus score of the resampled statistics, averaged over
    runs; scipy's coefficients; the percentile interval drops ⌊0.025·n⌋ from each end."""
    params = judged.correlations["params"]
    n_samples, seed = params["resamples"], params["seed"]
    segments = judged.segments
    n = len(segments)
    idx = np.random.default_rng(seed).choice(n, size=(n_samples, n), replace=True)
    counts = np.stack([np.bincount(row, minlength=n) for row in idx]).astype(float)
    systems = [
        p["system_id"]
        for p in next(e for e in crit["metrics"] if e["key"] == key)["system"]["points"]
    ]

    human_of = _replayed_human_side(judged, crit, human, systems)
    metric = make_metric(key)
    orient = -1.0 if key == "ter" else 1.0
    stats = {
        y: [
            metric.statistics(judged.hyps[r], judged.refs)
            for r in sorted(r for r, s in judged.run_system.items() if s == y)
        ]
        for y in systems
    }

    def metric_of(weights: np.ndarray) -> list[float]:
        return [
            orient * float(np.mean([metric.score_from_statistics(weights @ st) for st in stats[y]]))
            for y in systems
        ]

    samples: dict[str, list[float]] = {"pearson": [], "spearman": [], "kendall": []}
    with np.errstate(all="ignore"):
        for weights in counts:
            h, m = human_of(weights), metric_of(weights)
            if np.ptp(h) == 0 or np.ptp(m) == 0:
                continue  # every coefficient is undefined; the core drops it as NaN too
            samples["pearson"].append(sps.pearsonr(h, m)[0])
            samples["spearman"].append(sps.spearmanr(h, m)[0])
            samples["kendall"].append(sps.kendalltau(h, m)[0])
    out = {}
    for method, values in samples.items():
        ordered = np.sort([v for v in values if math.isfinite(v)])
        drop = math.floor(ordered.size * 0.025 + 1e-9)
        out[method] = (float(ordered[drop]), float(ordered[ordered.size - 1 - drop]))
    return out


@pytest.mark.parametrize("key", ["bleu", "ter"])
def test_the_bootstrap_resamples_the_statistic_of_the_point_estimate(judged, key) -> None:  # type: ignore[no-untyped-def]
    # Expected Wins (not a pooled win ratio) for rankings, mean z (raw points for ESA and MQM)
    # over REAL and REPEAT judgments (not REAL only) for scores: replayed here, the intervals
    # match to rounding.
    for crit, human in criteria(judged):
        entry = next(e for e in crit["metrics"] if e["key"] == key)
        replayed = _replayed_interval(judged, crit, human, key)
        for method, (low, high) in replayed.items():
            assert entry["system"][method]["low"] == pytest.approx(low, abs=1e-9), (
                crit["criterion"],
                method,
            )
            assert entry["system"][method]["high"] == pytest.approx(high, abs=1e-9)
