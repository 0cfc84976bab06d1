"""A Celery worker loads TER's and WER's compiled kernels in its main process, before the pool
forks, so that no pool process compiles them (or loads them from numba's cache) on a chunk."""

from __future__ import annotations

from celery.signals import worker_init

from evalcore.scoring import edit_distance
from metrics.tasks import _compile_kernels


def test_the_kernels_are_loaded_when_a_worker_starts_before_its_pool_forks():
    receivers = [ref() if callable(ref) else ref for _, ref in worker_init.receivers]
    assert _compile_kernels in receivers  # worker_init: the main process, before the fork
    _compile_kernels()
    assert edit_distance._ter.signatures
    assert edit_distance._levenshtein.signatures
