"""Signals of the annotation app.

``campaign_data_changed`` is sent (inside the writing transaction) when a campaign's data or
judgments change; the metrics app listens to schedule a recomputation after the commit.
"""

from __future__ import annotations

from django.dispatch import Signal

campaign_data_changed = Signal()  # keyword argument: campaign_id
