"""Tutorials: training items shown before a protocol's real items, each followed by feedback,
and the rule that decides whether an annotator who fails may go on (models in
``annotation.models.tutorial``)."""
