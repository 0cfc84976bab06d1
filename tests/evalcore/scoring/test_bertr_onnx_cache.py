"""BERTR's exported encoder is kept on disk: a later process reads the graph instead of
exporting it again, and the kept graph encodes exactly as a fresh export does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evalcore.scoring import bertr_onnx

pytestmark = pytest.mark.slow  # two exports of the encoder

BATCH = np.array([[101, 7592, 2088, 1012, 102], [101, 2088, 7592, 999, 102]], dtype=np.int64)


def encode(graph: bytes) -> np.ndarray:
    import onnxruntime

    session = onnxruntime.InferenceSession(graph, providers=["CPUExecutionProvider"])
    hidden: np.ndarray = session.run(None, {"input_ids": BATCH})[0]
    return hidden


def test_the_graph_is_exported_once_then_read_and_encodes_as_a_fresh_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bertr_onnx, "CACHE_FOLDER", tmp_path / "cache")
    exports: list[bytes] = []
    export = bertr_onnx._export

    def counted() -> bytes:
        exports.append(export())
        return exports[-1]

    monkeypatch.setattr(bertr_onnx, "_export", counted)
    first = bertr_onnx.graph()
    assert len(exports) == 1
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [bertr_onnx.graph_path().name]
    kept = bertr_onnx.graph()
    assert len(exports) == 1  # read, not exported again
    assert kept == first
    assert np.array_equal(encode(kept), encode(export()))


def test_the_key_changes_with_the_export_format(monkeypatch: pytest.MonkeyPatch) -> None:
    before = bertr_onnx.graph_path()
    monkeypatch.setattr(bertr_onnx, "EXPORT_FORMAT", bertr_onnx.EXPORT_FORMAT + 1)
    assert bertr_onnx.graph_path() != before
    assert bertr_onnx.graph_path().parent == before.parent


def test_a_folder_that_cannot_be_written_only_means_exporting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setattr(bertr_onnx, "CACHE_FOLDER", blocked / "cache")
    exports: list[bytes] = []
    export = bertr_onnx._export
    monkeypatch.setattr(bertr_onnx, "_export", lambda: exports.append(export()) or exports[-1])
    graphs = [bertr_onnx.graph(), bertr_onnx.graph()]
    assert graphs == exports  # each call exported
    assert list(tmp_path.iterdir()) == [blocked]
    assert encode(graphs[0]).shape == (2, 5, 384)
