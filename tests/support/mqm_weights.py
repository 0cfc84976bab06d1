"""MQM weights that are not Google's, for tests that must tell a config's weights from the
defaults."""

from __future__ import annotations

# Every weight differs from its default (Google's: 5, 1, 0, 0.1, 25).
CUSTOM = {
    "major": 3.0,
    "minor": 0.5,
    "neutral": 0.25,
    "minor_punctuation": 0.2,
    "non_translation": 10.0,
}
