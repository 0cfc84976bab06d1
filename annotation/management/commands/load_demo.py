"""``manage.py load_demo``: the demo campaign with an organizer and two annotators. Idempotent."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from annotation.campaigns.selectors import campaign_counts
from annotation.demo.campaign import DEMO_ANNOTATORS, DEMO_ORGANIZER, DEMO_PASSWORD, demo_load


class Command(BaseCommand):
    help = "Load the demo campaign (German→English, 4 systems × 3 runs) and its demo accounts."

    def handle(self, *args: Any, **options: Any) -> None:
        result = demo_load()
        counts = campaign_counts(campaign=result.campaign)
        verb = "Created" if result.created else "Already present:"
        self.stdout.write(
            f"{verb} {result.campaign.name}: {counts.documents} documents, {counts.segments} "
            f"segments, {counts.reference_sets} references, {counts.systems} systems, "
            f"{counts.runs} runs."
        )
        self.stdout.write("Log in at http://127.0.0.1:8000/login/ with")
        self.stdout.write(f"  organizer:  {DEMO_ORGANIZER} / {DEMO_PASSWORD}")
        for name in DEMO_ANNOTATORS:
            self.stdout.write(f"  annotator:  {name} / {DEMO_PASSWORD}")
