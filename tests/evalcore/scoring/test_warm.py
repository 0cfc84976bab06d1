"""``python -m evalcore.scoring.warm`` (run by ``make`` after installing) leaves nothing for a
later process to compile or export."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from evalcore.scoring import bertr_onnx
from evalcore.scoring.warm import warm

ROOT = Path(__file__).resolve().parents[3]

SCORE_TER_AND_WER = (
    "from evalcore.scoring import make_metric\n"
    "for name in ('ter', 'wer'):\n"
    "    print(make_metric(name).corpus_score(['a cat sat on a mat'], [['the cat sat']]).score)\n"
)


def test_after_warming_a_new_process_loads_the_kernels_and_reads_the_encoder() -> None:
    done = warm()
    assert done[0].startswith("edit-distance kernels ready")
    assert bertr_onnx.graph_path().is_file()  # the test venv has the neural extra
    assert str(bertr_onnx.graph_path()) in done[1]
    scored = subprocess.run(
        [sys.executable, "-c", SCORE_TER_AND_WER],
        cwd=ROOT,
        env={**os.environ, "NUMBA_DEBUG_CACHE": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "data loaded" in scored.stdout
    assert "data saved" not in scored.stdout  # nothing compiled anew
    assert [float(v) for v in scored.stdout.split("\n") if v[:1].isdigit()] == [
        make_score("ter"),
        make_score("wer"),
    ]


def make_score(name: str) -> float:
    from evalcore.scoring import make_metric

    return make_metric(name).corpus_score(["a cat sat on a mat"], [["the cat sat"]]).score
