"""A Celery worker gives each pool process its share of the cores for BERTR's encoder, set in
its main process before the pool forks; an operator's own setting is kept."""

from __future__ import annotations

import os
from types import SimpleNamespace

from celery.signals import worker_init

from evalcore.scoring.bertr import THREADS_ENV
from metrics.tasks import _torch_threads


def test_each_pool_process_gets_its_share_of_the_cores(monkeypatch):
    receivers = [ref() if callable(ref) else ref for _, ref in worker_init.receivers]
    assert _torch_threads in receivers  # worker_init: the main process, before the fork
    cores = len(os.sched_getaffinity(0))
    for concurrency, expected in ((1, cores), (cores, 1), (4 * cores, 1)):
        monkeypatch.delenv(THREADS_ENV, raising=False)
        _torch_threads(sender=SimpleNamespace(concurrency=concurrency))
        assert os.environ[THREADS_ENV] == str(expected)
    monkeypatch.setenv(THREADS_ENV, "3")
    _torch_threads(sender=SimpleNamespace(concurrency=2))
    assert os.environ[THREADS_ENV] == "3"
