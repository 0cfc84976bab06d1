"""Deterministic synthetic MT outputs for the scoring and significance benchmarks.

References are sentences of 5–40 words drawn from a Zipf-distributed vocabulary of 5,000 words
(P ∝ 1/rank) with some punctuation. Systems come in families that share a decoder: each of the
20 systems belongs to one of 5 families and, per segment, outputs its family's translation with
probability 0.5, or its own. A translation is the reference with each word replaced (probability
0.1–0.5 by system quality), dropped (0.05) or followed by an inserted word (0.05), and a few
swaps of neighbouring words. The same seed gives the same corpus on every machine.
"""

from __future__ import annotations

import numpy as np

VOCABULARY = 5000
PUNCTUATION = [",", ".", "?", "!", ";", ":", "(", ")", '"', "'s", "-"]


# Zipf's law over a finite vocabulary: P(rank r) ∝ 1 / r (the most frequent word ≈ 11% of
# tokens, close to "the" in English text); ranks 3, 7, 11, ... are punctuation marks.
_PROBABILITIES = 1.0 / np.arange(1, VOCABULARY + 1)
_PROBABILITIES /= _PROBABILITIES.sum()
_TOKENS = [
    PUNCTUATION[(r // 4) % len(PUNCTUATION)] if r % 4 == 3 and r < 48 else f"w{r}"
    for r in range(1, VOCABULARY + 1)
]


def _words(rng: np.random.Generator, n: int) -> list[str]:
    return [_TOKENS[i] for i in rng.choice(VOCABULARY, size=n, p=_PROBABILITIES)]


def references(rng: np.random.Generator, n_segments: int) -> list[str]:
    """One reference stream."""
    lengths = rng.integers(5, 41, size=n_segments)
    return [" ".join(_words(rng, int(n))) for n in lengths]


def translate(rng: np.random.Generator, reference: str, quality: float) -> str:
    """A noisy translation of one reference."""
    out: list[str] = []
    for word in reference.split():
        roll = rng.random()
        if roll < 0.05:
            continue  # dropped
        out.append(_words(rng, 1)[0] if roll < 0.05 + quality else word)
        if rng.random() < 0.05:
            out.extend(_words(rng, 1))  # inserted
    for _ in range(len(out) // 10):
        i = int(rng.integers(0, max(1, len(out) - 1)))
        out[i : i + 2] = out[i : i + 2][::-1]
    return " ".join(out)


def make_corpus(
    *, n_systems: int = 20, n_segments: int = 2000, n_refs: int = 1, seed: int = 2024
) -> tuple[list[tuple[str, list[str]]], list[list[str]]]:
    """``([(system name, hypotheses)], reference streams)``."""
    rng = np.random.default_rng(seed)
    refs = [references(rng, n_segments) for _ in range(n_refs)]
    n_families = 5
    family_quality = np.linspace(0.15, 0.45, n_families)
    families = [[translate(rng, line, float(q)) for line in refs[0]] for q in family_quality]
    systems = []
    for k in range(n_systems):
        family = k % n_families
        quality = float(family_quality[family] + rng.uniform(-0.05, 0.05))
        own = rng.random(n_segments) >= 0.5
        hyps = [
            translate(rng, refs[0][i], quality) if own[i] else families[family][i]
            for i in range(n_segments)
        ]
        systems.append((f"system{k:02d}", hyps))
    return systems, refs
