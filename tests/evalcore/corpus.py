"""Deterministic synthetic corpora for the metric tests (no external data)."""

from __future__ import annotations

import random

WORDS = [
    "the",
    "a",
    "of",
    "to",
    "and",
    "in",
    "is",
    "was",
    "for",
    "on",
    "that",
    "with",
    "as",
    "by",
    "at",
    "from",
    "this",
    "it",
    "be",
    "are",
    "an",
    "airport",
    "security",
    "officials",
    "israeli",
    "responsible",
    "charge",
    "government",
    "work",
    "side",
    "house",
    "cat",
    "dog",
    "mat",
    "sat",
    "big",
    "small",
    "red",
    "green",
    "quickly",
    "slowly",
    ",",
    ".",
    "?",
    "!",
    "(",
    ")",
    "'",
    '"',
    "-",
]


def sentence(rng: random.Random, low: int = 0, high: int = 18) -> str:
    """A random line of words and punctuation."""
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def noisy_copy(rng: random.Random, line: str, p: float) -> str:
    """The line with each word replaced by a random one with probability p."""
    return " ".join(rng.choice(WORDS) if rng.random() < p else w for w in line.split())


def corpus(
    seed: int, n_segments: int, n_refs: int = 1, noise: float = 0.4
) -> tuple[list[str], list[list[str]]]:
    """Hypotheses and reference streams: references are random, hypotheses noisy copies."""
    rng = random.Random(seed)
    refs = [[sentence(rng) for _ in range(n_segments)] for _ in range(n_refs)]
    hyps = [noisy_copy(rng, line, noise) for line in refs[0]]
    return hyps, refs


def variant(seed: int, hyps: list[str], refs: list[list[str]], changed: float) -> list[str]:
    """A second system: the first with a share of its lines translated afresh (closer or not)."""
    rng = random.Random(seed)
    return [
        noisy_copy(rng, refs[0][i], rng.choice((0.2, 0.6))) if rng.random() < changed else h
        for i, h in enumerate(hyps)
    ]
