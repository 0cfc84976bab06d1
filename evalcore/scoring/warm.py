"""Fill this installation's caches of compiled and exported code, so that no test and no first
analysis pays for it: ``python -m evalcore.scoring.warm`` (``make`` runs it after installing).

numba keeps the edit-distance kernels in ``evalcore/scoring/__pycache__`` and BERTR keeps its
exported ONNX encoder there (``bertr_onnx.graph_path``); both are refilled by themselves when a
source file or a package version changes. Without the ``neural`` extra, BERTR is left out.
"""

from __future__ import annotations

import sys
import time

from .bertr import neural_available
from .bertr_onnx import graph, graph_path, onnx_available
from .edit_distance import warm_up


def warm() -> list[str]:
    """Compile (or load) the kernels and export (or read) BERTR's encoder; what was done."""
    done = []
    started = time.perf_counter()
    warm_up()
    done.append(f"edit-distance kernels ready in {time.perf_counter() - started:.1f} s")
    if neural_available() and onnx_available():
        started = time.perf_counter()
        graph()
        done.append(f"BERTR's encoder in {graph_path()} in {time.perf_counter() - started:.1f} s")
    else:
        done.append("BERTR left out: the neural extra is not installed")
    return done


if __name__ == "__main__":
    for line in warm():
        sys.stdout.write(f"{line}\n")
