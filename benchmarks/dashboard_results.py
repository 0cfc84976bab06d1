"""The stored results of the dashboard benchmark (``benchmarks/dashboard.py``) that are
synthesised, not computed: the ``metrics`` and ``correlations`` documents, with the shapes
:func:`metrics.pipeline.finalize` writes."""

from __future__ import annotations

from typing import Any

import numpy as np


def metric_labels(names: list[str]) -> dict[str, tuple[str, bool, str]]:
    """(label, higher is better, signature) per metric; BERTR is described, not loaded."""
    from evalcore.scoring import make_metric

    out = {}
    for name in names:
        if name == "bertr":
            out[name] = ("BERTR", True, "BERTR|nrefs:2|model:all-MiniLM-L6-v2|version:synthetic")
            continue
        metric = make_metric(name)
        out[name] = (metric.label, metric.higher_is_better, metric.signature(n_refs=2).format())
    return out


def synthetic_metrics(
    systems: list[Any],
    params: dict[str, Any],
    rng: np.random.Generator,
    *,
    n_runs: int,
    n_segments: int,
) -> Any:
    """A ``metrics`` document with the keys :func:`metrics.pipeline.finalize` writes, for
    ``n_segments`` segments and ``n_runs`` runs per system."""
    names = list(params["metrics"])
    labels = metric_labels(names)
    n = len(systems)
    baseline = systems[0]
    docs = []
    for name in names:
        label, higher, signature = labels[name]
        quality = np.linspace(70, 20, n) if higher else np.linspace(20, 70, n)
        rows = metric_systems(systems, quality, rng)
        p = rng.uniform(0, 0.3, (n, n))
        delta = np.subtract.outer(quality, quality).T
        np.fill_diagonal(p, np.nan)
        docs.append(
            {
                "key": name,
                "label": label,
                "signature": signature,
                "higher_is_better": higher,
                "systems": rows,
                "pairwise": {
                    "systems": [s.pk for s in systems],
                    "pooled_runs": n_runs,
                    "bootstrap_p": _matrix(p),
                    "ar_p": _matrix(p * 0.9),
                    "delta": _matrix(delta),
                    "win_share": _matrix(np.where(np.isnan(p), np.nan, 1 - p)),
                },
            }
        )
    from metrics.documents import MetricsDocument

    # Through the class the dashboard reads it with: a shape that drifted fails here.
    return MetricsDocument.from_json(
        {
            "version": params["version"],
            "params": {**params, "n_references": 2},
            "n_segments": n_segments,
            "systems": [
                {
                    "id": s.pk,
                    "name": s.name,
                    "runs": [{"id": r.pk, "name": r.name} for r in s.runs.all()],
                }
                for s in systems
            ],
            "baseline": {"id": baseline.pk, "name": baseline.name},
            "unavailable": {},
            "metrics": docs,
        }
    ).to_json()


def metric_systems(systems: list[Any], quality: np.ndarray, rng: np.random.Generator) -> list[Any]:
    """One metric's scores of every system and run around ``quality`` (per system), and each
    system's comparison with the baseline (the first)."""
    baseline = systems[0]
    rows = []
    for k, system in enumerate(systems):
        runs = []
        for run in system.runs.all():
            score = float(quality[k] + rng.normal(0, 1.5))
            runs.append(
                {
                    "id": run.pk,
                    "name": run.name,
                    "score": score,
                    "ci_low": score - 1.8,
                    "ci_high": score + 1.8,
                    "boot_std": 0.9,
                }
            )
        mean = float(np.mean([r["score"] for r in runs]))
        rows.append(
            {
                "id": system.pk,
                "name": system.name,
                "runs": runs,
                "mean": mean,
                "s_sel": 0.9,
                "s_opt": float(abs(runs[0]["score"] - runs[-1]["score"]) / 2),
                "p_baseline": None if system == baseline else float(rng.uniform(0, 0.2)),
                "delta_baseline": None if system == baseline else mean - quality[0],
            }
        )
    return rows


def synthetic_correlations(
    human: dict[str, Any], metrics: dict[str, Any], params: dict[str, Any], rng: np.random.Generator
) -> Any:
    """A ``correlations`` document with the keys :mod:`metrics.correlations` writes, from the
    stored ``human`` document (read through its class, as the pipeline reads it)."""
    from annotation.analysis.results import HumanDocument

    out = []
    keys = [m["key"] for m in metrics["metrics"]]
    for crit in HumanDocument.from_json(human).analysis.criteria:
        ranking = crit.kind == "ranking"
        point = {
            s.system_id: s.expected_wins if ranking else s.score
            for s in crit.systems
            if s.position > 0
        }
        entries = [
            correlation_entry(doc, point, ranking=ranking, rng=rng) for doc in metrics["metrics"]
        ]
        p = rng.uniform(0, 1, (len(keys), len(keys)))
        np.fill_diagonal(p, np.nan)
        out.append(
            {
                "config_id": crit.config_id,
                "config_name": crit.config_name,
                "criterion": crit.criterion,
                "label": crit.criterion_label,
                "kind": crit.kind,
                "human_score": "Expected Wins" if ranking else "mean z",
                "metrics": entries,
                "williams": {"metrics": keys, "p": _matrix(p)},
            }
        )
    from metrics.documents import CorrelationsDocument

    return CorrelationsDocument.from_json(
        {
            "version": params["version"],
            "params": {
                "resamples": params["resamples"],
                "seed": params["seed"],
                "da_pair_threshold": 25.0,
            },
            "criteria": out,
        }
    ).to_json()


def correlation_entry(
    doc: dict[str, Any], point: dict[Any, Any], *, ranking: bool, rng: np.random.Generator
) -> dict[str, Any]:
    """One metric's correlations with one human criterion, whose score per system is
    ``point``."""
    sign = 1.0 if doc["higher_is_better"] else -1.0
    points = [
        {
            "system_id": s["id"],
            "name": s["name"],
            "human": point[s["id"]],
            "metric": sign * s["mean"],
        }
        for s in doc["systems"]
        if point.get(s["id"]) is not None
    ]

    def interval(value: float) -> dict[str, float]:
        return {"value": value, "low": value - 0.1, "high": min(1.0, value + 0.05)}

    segment: dict[str, Any] = {}
    if not ranking:
        segment["pearson_z"] = {"value": float(rng.uniform(0.2, 0.5)), "n": 30_000}
    segment["darr"] = {
        "tau": float(rng.uniform(0.1, 0.4)),
        "concordant": 6_000,
        "discordant": 3_000,
        "pairs": 9_000,
        "threshold": 0.0 if ranking else 25.0,
        "from": "ranks on one screen" if ranking else "DA translations of one segment",
    }
    return {
        "key": doc["key"],
        "label": doc["label"],
        "oriented": sign < 0,
        "system": {
            "n": len(points),
            "pearson": interval(float(rng.uniform(0.8, 0.95))),
            "spearman": interval(float(rng.uniform(0.8, 0.95))),
            "kendall": interval(float(rng.uniform(0.6, 0.85))),
            "pairwise_accuracy": float(rng.uniform(0.8, 0.95)),
            "points": points,
            "fit": {"slope": 0.02, "intercept": -1.0},
        },
        "segment": segment,
    }


def _matrix(values: np.ndarray) -> list[list[float | None]]:
    return [[float(v) if np.isfinite(v) else None for v in row] for row in values]
