"""The allocation state of a pull-mode protocol config: what the policy decided from the
judgments stored so far, kept so that a pull recomputes it only every few judgments."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from annotation.models.tasks import ProtocolConfig


class AllocationState(models.Model):
    """The newest allocation of a pull-mode config (one row per config, replaced on each
    recomputation). ``weights`` is the share of the next screens each system gets, by system
    id; ``pairs`` the adjacent pairs of the current ranking, best first, as
    ``{"high": id, "low": id, "p": p-value, "decided": bool}``."""

    class Stop(models.TextChoices):
        RUNNING = "", _("Running")
        DECIDED = "decided", _("Every adjacent pair is decided")
        BUDGET = "budget", _("The budget is spent")

    config = models.OneToOneField(
        ProtocolConfig, on_delete=models.CASCADE, primary_key=True, related_name="allocation_state"
    )
    # Judgments of real outputs stored when this was computed, and allocated (built) by then.
    judgments = models.PositiveIntegerField(default=0)
    allocated = models.PositiveIntegerField(default=0)
    weights = models.JSONField(default=dict)
    pairs = models.JSONField(default=list)
    stopped = models.CharField(
        max_length=10, choices=Stop.choices, default=Stop.RUNNING, blank=True
    )
    computed = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"allocation of {self.config_id}"

    @property
    def decided(self) -> int:
        return sum(1 for pair in self.pairs if pair["decided"])
