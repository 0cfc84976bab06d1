"""What merging identical outputs saves when tasks are built: screens and judged outputs.

    .venv/bin/python benchmarks/merging.py

No real multi-system test set ships with an installed package (sacreBLEU downloads WMT's
system outputs at run time; none are stored here), so the figures come from the two
multi-system data sets the project has, named for what they are:

* ``mt_data``: ``benchmarks/mt_data.py``'s synthetic corpus (20 systems × 2,000 segments, five
  families of four systems that output their family's translation with probability 0.5 — so
  many identical outputs by construction);
* ``demo``: the demo campaign's data (60 segments, 4 simulated systems × 3 runs, the run
  shown for a segment in rotation as a build shows it).

For each, the builds' planner runs with and without merging (the same planning code as
``annotation.tasking.build``, default QC mix and 100 items a task) for direct assessment
(k = 1), adequacy/fluency (k = 5) and ranking (k = 5; a segment with one distinct text gets
no ranking screen). Prints per kind the items (screens, QC copies included) and the shown
outputs to judge, unmerged and merged, the saving in per cent, and the planning time ratio
(merged / unmerged, same run).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotation.tasking.merging import merged_screens, output_groups
from annotation.tasking.plan import QcMix, balanced_screens, plan_tasks
from benchmarks.mt_data import make_corpus

KINDS = (("direct_assessment", 1, 1), ("adequacy_fluency", 5, 1), ("ranking", 5, 2))


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _size(screens: list, seed: int) -> tuple[int, int]:  # type: ignore[type-arg]
    plans = plan_tasks(
        screens, items_per_task=100, mix=QcMix(), rng=np.random.default_rng(seed + 1)
    )
    items = [item for plan in plans for item in plan.items]
    return len(items), sum(len(item.screen.systems) for item in items)


def measure(name: str, texts: list[list[str]], seed: int = 12345) -> None:
    """``texts[s][y]``: system y's translation of segment s."""
    n_segments, n_systems = len(texts), len(texts[0])
    groups = [output_groups(segment) for segment in texts]
    distinct = np.array([len(g) for g in groups])
    _say(
        f"{name}: {n_systems} systems × {n_segments} segments; distinct texts per segment "
        f"mean {distinct.mean():.2f}, segments with an identical pair "
        f"{(distinct < n_systems).mean():.1%}, outputs that repeat another "
        f"{1 - distinct.sum() / (n_segments * n_systems):.1%}"
    )
    for kind, k, min_width in KINDS:
        start = time.perf_counter()
        plain = balanced_screens(n_segments, n_systems, k, np.random.default_rng(seed))
        plain_seconds = time.perf_counter() - start
        start = time.perf_counter()
        merged = merged_screens(
            groups, n_systems, k, np.random.default_rng(seed), min_width=min_width
        )
        merged_seconds = time.perf_counter() - start
        (items0, outputs0), (items1, outputs1) = _size(plain, seed), _size(merged, seed)
        _say(
            f"  {kind:18} k={k}: items {items0:>6} → {items1:>6} "
            f"({1 - items1 / items0:6.1%} saved), outputs to judge {outputs0:>6} → "
            f"{outputs1:>6} ({1 - outputs1 / outputs0:6.1%} saved); planning time "
            f"{merged_seconds / max(plain_seconds, 1e-9):.2f}× unmerged"
        )


def demo_texts() -> list[list[str]]:
    """The demo's translations as a build shows them: system i's run (s + i) mod runs on
    segment s, systems in name order."""
    from annotation.demo.campaign import demo_files

    runs: dict[str, dict[str, list[str]]] = {}
    for upload in demo_files():
        if upload.role != "systems":
            continue
        system, run, _txt = upload.name.rsplit(".", 2)
        runs.setdefault(system, {})[run] = upload.content.decode().splitlines()
    names = sorted(runs)
    n_segments = len(next(iter(runs[names[0]].values())))
    texts = []
    for s in range(n_segments):
        row = []
        for i, name in enumerate(names):
            ordered = [runs[name][r] for r in sorted(runs[name])]
            row.append(ordered[(s + i) % len(ordered)][s])
        texts.append(row)
    return texts


def main() -> None:
    systems, _refs = make_corpus()
    measure("mt_data", [list(row) for row in zip(*(h for _, h in systems), strict=True)])
    measure("demo", demo_texts())


if __name__ == "__main__":
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
    django.setup()
    main()
