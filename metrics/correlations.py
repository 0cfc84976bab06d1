"""Metric–human correlations of a campaign (the meta-evaluation of DESIGN §9), as one JSON
document for the dashboard.

For every human criterion that has judgments (adequacy, fluency, DA score, rank) and every metric:

- **system level**: Pearson, Spearman and Kendall τ-b between the human system scores and the
  metric's corpus scores (mean over runs), each with a bootstrap interval over segments
  (:func:`metrics.stats.meta.system_correlation_bootstrap`), and pairwise accuracy; the points
  and the least-squares line of the scatter plot;
- **segment level**: Pearson between each translation's mean z-score and its sentence score (score
  criteria), and the WMT DARR Kendall-like τ — DA pairs of translations of one segment whose mean
  raw scores differ by more than 25, or rank pairs of one screen with different ranks;
- **Williams test** between every two metrics' system-level Pearson correlations.

Error metrics (TER, WER, PER) are negated first, so that a metric that agrees with the humans
always correlates positively.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from annotation.analysis import criterion_table_load
from annotation.models import JudgmentValue, ProtocolConfig, Segment, System
from annotation.stats import ItemType, normalise, pairwise_comparisons, segment_scores
from metrics.stats.correlation import darr_kendall, pairwise_accuracy, pearson, williams_test
from metrics.stats.meta import least_squares_line, system_correlation_bootstrap

DA_PAIR_THRESHOLD = 25.0


def _num(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _criterion_inputs(
    config: ProtocolConfig,
    criterion: str,
    included_ids: set[int],
    system_index: dict[int, int],
    segment_index: dict[int, int],
) -> dict[str, Any] | None:
    """Per (system, segment) human statistics ``[sum, weight]`` in campaign order, and the rows
    for the segment-level correlations."""
    table = criterion_table_load(config=config, criterion=criterion)
    j = table.judgments
    if len(j.score) == 0:
        return None
    n_systems, n_segments = len(system_index), len(segment_index)
    include = np.array([int(a) in included_ids for a in table.annotator_ids], dtype=bool)
    rows = (j.item_type == ItemType.REAL) & include[j.annotator]
    sys_ids = table.system_ids
    seg_ids = table.segment_ids
    human = np.zeros((n_systems, n_segments, 2))
    value_ids = table.value_ids
    translation = {
        vid: (run_id, seg_id)
        for vid, run_id, seg_id in JudgmentValue.objects.filter(
            pk__in=value_ids[rows].tolist()
        ).values_list("pk", "output__run_id", "output__translation__segment_id")
    }
    if table.is_ranking:
        comparisons = pairwise_comparisons(j)
        keep = (comparisons.item_type == ItemType.REAL) & include[comparisons.annotator]
        c = comparisons.select(keep)
        for a, b, seg, outcome in zip(c.system_a, c.system_b, c.segment, c.outcome, strict=True):
            if outcome == 0:
                continue
            seg_pos = segment_index[int(seg_ids[seg])]
            for system, won in ((a, outcome > 0), (b, outcome < 0)):
                k = system_index.get(int(sys_ids[system]))
                if k is None:
                    continue
                human[k, seg_pos, 0] += 1.0 if won else 0.0
                human[k, seg_pos, 1] += 1.0
        return {"human": human, "table": table, "rows": rows, "translation": translation}
    normalised = normalise(j)
    scores = segment_scores(j, normalised.z, rows)
    for code_sys in range(scores.mean.shape[0]):
        k = system_index.get(int(sys_ids[code_sys])) if code_sys < len(sys_ids) else None
        if k is None:
            continue
        for code_seg in range(scores.mean.shape[1]):
            value = scores.mean[code_sys, code_seg]
            if np.isfinite(value):
                human[k, segment_index[int(seg_ids[code_seg])]] = (value, 1.0)
    return {
        "human": human,
        "table": table,
        "rows": rows,
        "translation": translation,
        "z": normalised.z,
    }


def _segment_level(
    inputs: dict[str, Any],
    sentence: dict[int, np.ndarray],
    positions: dict[int, int],
    oriented: float,
    is_ranking: bool,
    slider: bool,
) -> dict[str, Any]:
    table, rows, translation = inputs["table"], inputs["rows"], inputs["translation"]
    j = table.judgments
    value_ids = table.value_ids
    out: dict[str, Any] = {}
    if is_ranking:
        idx = np.flatnonzero(rows)
        human, metric, groups = [], [], []
        for r in idx:
            key = translation.get(int(value_ids[r]))
            if key is None or key[0] not in sentence:
                continue
            human.append(-float(j.score[r]))  # rank 1 is best
            metric.append(oriented * float(sentence[key[0]][positions[key[1]]]))
            groups.append(int(j.screen[r]))
        if human:
            darr = darr_kendall(human, metric, groups, threshold=0.0)
            out["darr"] = {
                "tau": _num(darr.tau),
                "concordant": darr.concordant,
                "discordant": darr.discordant,
                "pairs": darr.pairs,
                "threshold": 0.0,
                "from": "ranks on one screen",
            }
        return out
    z = inputs["z"]
    per_translation: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for r in np.flatnonzero(rows):
        key = translation.get(int(value_ids[r]))
        if key is None or key[0] not in sentence or not np.isfinite(z[r]):
            continue
        per_translation.setdefault(key, []).append((float(z[r]), float(j.score[r])))
    keys = sorted(per_translation)
    if len(keys) >= 3:
        mean_z = [np.mean([v[0] for v in per_translation[k]]) for k in keys]
        metric = [oriented * float(sentence[k[0]][positions[k[1]]]) for k in keys]
        out["pearson_z"] = {"value": _num(pearson(mean_z, metric)), "n": len(keys)}
        if slider:
            raw = [np.mean([v[1] for v in per_translation[k]]) for k in keys]
            darr = darr_kendall(raw, metric, [k[1] for k in keys], threshold=DA_PAIR_THRESHOLD)
            out["darr"] = {
                "tau": _num(darr.tau),
                "concordant": darr.concordant,
                "discordant": darr.discordant,
                "pairs": darr.pairs,
                "threshold": DA_PAIR_THRESHOLD,
                "from": "DA translations of one segment",
            }
    return out


def correlations_compute(
    *,
    campaign: Any,
    params: dict[str, Any],
    metrics: dict[str, Any],
    metric_docs: list[dict[str, Any]],
    metric_stats: dict[str, list[np.ndarray]],
    sentence: dict[str, dict[int, np.ndarray]],
    systems: list[System],
    human_doc: dict[str, Any],
) -> dict[str, Any]:
    """The correlation document; see the module docstring."""
    system_index = {s.pk: i for i, s in enumerate(systems)}
    segments = list(
        Segment.objects.filter(campaign=campaign).order_by("position").values_list("pk", flat=True)
    )
    segment_index = {pk: i for i, pk in enumerate(segments)}
    positions = segment_index
    seed = params["seed"]
    n_boot = params["bootstrap_samples"]
    configs = {c.pk: c for c in ProtocolConfig.objects.filter(campaign=campaign)}
    out_criteria = []
    for crit in human_doc["analysis"]["criteria"]:
        config = configs.get(crit["config_id"])
        if config is None:
            continue
        included = {a["annotator_id"] for a in crit["annotators"] if a["included"]}
        inputs = _criterion_inputs(config, crit["criterion"], included, system_index, segment_index)
        if inputs is None:
            continue
        is_ranking = crit["kind"] == "ranking"
        point = {
            s["system_id"]: (s["expected_wins"] if is_ranking else s["score"])
            for s in crit["systems"]
            if s["position"] > 0
        }
        chosen = [i for i, s in enumerate(systems) if _num(point.get(s.pk)) is not None]
        slider = crit["scale"][1] - crit["scale"][0] > 10
        metrics_out = []
        oriented_points: dict[str, np.ndarray] = {}
        for doc in metric_docs:
            key = doc["key"]
            metric = metrics[key]
            sign = 1.0 if doc["higher_is_better"] else -1.0
            entry: dict[str, Any] = {"key": key, "label": doc["label"], "oriented": sign < 0}
            if len(chosen) >= 3:
                human = inputs["human"][chosen]
                stats = np.stack([metric_stats[key][i] for i in chosen])
                result = system_correlation_bootstrap(
                    human,
                    stats,
                    lambda summed, f=metric.score_from_statistics, s=sign: s * f(summed),
                    human_point=[point[systems[i].pk] for i in chosen],
                    n_samples=n_boot,
                    rng=seed,
                )
                metric_point = [
                    sign * next(d["mean"] for d in doc["systems"] if d["id"] == systems[i].pk)
                    for i in chosen
                ]
                human_point = [point[systems[i].pk] for i in chosen]
                oriented_points[key] = np.array(metric_point)
                slope, intercept = least_squares_line(metric_point, human_point)
                entry["system"] = {
                    "n": len(chosen),
                    **{
                        m: {"value": _num(r.value), "low": _num(r.low), "high": _num(r.high)}
                        for m, r in result.items()
                    },
                    "pairwise_accuracy": _num(pairwise_accuracy(human_point, metric_point)),
                    "points": [
                        {
                            "system_id": systems[i].pk,
                            "name": systems[i].name,
                            "human": h,
                            "metric": m,
                        }
                        for i, h, m in zip(chosen, human_point, metric_point, strict=True)
                    ],
                    "fit": {"slope": _num(slope), "intercept": _num(intercept)},
                }
            entry["segment"] = _segment_level(
                inputs, sentence[key], positions, sign, is_ranking, slider
            )
            metrics_out.append(entry)
        williams: dict[str, Any] = {"metrics": [], "p": []}
        keys = list(oriented_points)
        if len(chosen) >= 4 and len(keys) >= 2:
            human_point = np.array([point[systems[i].pk] for i in chosen])
            williams["metrics"] = keys
            for a in keys:
                row: list[float | None] = []
                for b in keys:
                    if a == b:
                        row.append(None)
                        continue
                    r12 = pearson(human_point, oriented_points[a])
                    r13 = pearson(human_point, oriented_points[b])
                    r23 = pearson(oriented_points[a], oriented_points[b])
                    if not all(np.isfinite([r12, r13, r23])):
                        row.append(None)
                        continue
                    row.append(_num(williams_test(r12, r13, r23, len(chosen)).p_value))
                williams["p"].append(row)
        out_criteria.append(
            {
                "config_id": crit["config_id"],
                "config_name": crit["config_name"],
                "criterion": crit["criterion"],
                "label": crit["criterion_label"],
                "kind": crit["kind"],
                "human_score": "Expected Wins"
                if is_ranking
                else f"mean {crit.get('method', {}).get('space', 'z')}",
                "metrics": metrics_out,
                "williams": williams,
            }
        )
    return {
        "version": params["version"],
        "params": {
            "bootstrap_samples": n_boot,
            "seed": seed,
            "da_pair_threshold": DA_PAIR_THRESHOLD,
        },
        "criteria": out_criteria,
    }
