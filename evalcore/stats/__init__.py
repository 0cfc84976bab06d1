"""Resampling, significance tests and correlations on arrays of per-segment statistics.

Django-free: the web app, the Celery tasks and the ``evaluate`` command all call this package with
numpy arrays. A corpus score is always a function of *summed* per-segment statistics, so every
resampling procedure here is a matrix product followed by a vectorised score function.
"""

from __future__ import annotations
