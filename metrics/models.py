"""Stored results of background work."""

from __future__ import annotations

from django.db import models


class WiringProbe(models.Model):
    """A row written by the ``ping`` task: proof that a worker reached the database."""

    token = models.CharField(max_length=64, unique=True)
    worker_hostname = models.CharField(max_length=200)
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"probe {self.token} from {self.worker_hostname}"
