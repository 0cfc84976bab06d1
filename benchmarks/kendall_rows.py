"""Kendall's τ-b over bootstrap resamples of system scores: one array operation against a call
per resample.

    .venv/bin/python benchmarks/kendall_rows.py            # 4, 15 and 40 systems × 1,000 rows
    .venv/bin/python benchmarks/kendall_rows.py --quick    # 4 systems × 200 rows, a smoke run

The system-level correlation bootstrap (``evalcore.stats.meta``) needs τ-b of the human and the
metric system scores in every resample. For each size, in the same run, on the same rows (ties
included): :func:`kendall_tau_rows` over all rows; :func:`kendall_tau` called per row (the code
before); ``scipy.stats.kendalltau`` per row. Prints seconds, the speed-ups, and whether the rows
agree with ``kendall_tau`` bit for bit and with scipy to 1e-12.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats as sps

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalcore.stats.correlation import kendall_tau, kendall_tau_rows


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def measure(n_systems: int, n_rows: int, rng: np.random.Generator) -> None:
    x = rng.integers(0, 8, (n_rows, n_systems)).astype(float)
    y = x + rng.normal(0, 2, (n_rows, n_systems)).round(1)
    rows, ours = timed(lambda: kendall_tau_rows(x, y))
    per_row, before = timed(
        lambda: np.array([kendall_tau(a, b) for a, b in zip(x, y, strict=True)])
    )
    scipy_rows, scipy_time = timed(
        lambda: np.array([sps.kendalltau(a, b).statistic for a, b in zip(x, y, strict=True)])
    )
    same = bool(np.array_equal(rows, per_row, equal_nan=True))
    gap = float(np.nanmax(np.abs(rows - scipy_rows)))
    sys.stdout.write(
        f"{n_systems:>3} systems × {n_rows} rows: rows {ours:.4f} s, per row {before:.4f} s "
        f"({before / ours:.0f}×), scipy per row {scipy_time:.4f} s ({scipy_time / ours:.0f}×); "
        f"bit for bit {'yes' if same else 'NO'}, largest gap to scipy {gap:.1e}\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="4 systems × 200 rows")
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    for n_systems in (4,) if args.quick else (4, 15, 40):
        measure(n_systems, 200 if args.quick else 1000, rng)


if __name__ == "__main__":
    main()
