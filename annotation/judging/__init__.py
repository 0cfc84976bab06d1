"""Judging: the annotation screen, recording judgments, the annotator pages and API."""
