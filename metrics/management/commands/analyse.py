"""``manage.py analyse``: bring campaigns' stored results up to date in this process.

``make run`` calls ``manage.py analyse --demo`` before it serves the app, so the demo's dashboard
and analysis page are complete from the first page. A campaign whose stored results describe its
data as it is now is left alone.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.demo.campaign import DEMO_CAMPAIGN_NAME, DEMO_ORGANIZER
from annotation.models import Campaign
from metrics.inline import campaign_analysis_run_here


class Command(BaseCommand):
    help = (
        "Compute the background analysis (metrics, significance, the human analysis, "
        "correlations) of campaigns in this process, unless their stored results are current."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("campaigns", nargs="*", help="campaign ids")
        parser.add_argument("--demo", action="store_true", help="the demo campaign")

    def handle(self, *args: Any, campaigns: list[str], demo: bool, **options: Any) -> None:
        found = list(Campaign.objects.filter(pk__in=campaigns)) if campaigns else []
        if len(found) != len(set(campaigns)):
            missing = set(campaigns) - {str(c.pk) for c in found}
            raise CommandError(f"no such campaign: {', '.join(sorted(missing))}")
        if demo:
            found += list(
                Campaign.objects.filter(name=DEMO_CAMPAIGN_NAME, owner__username=DEMO_ORGANIZER)
            )
        if not found:
            raise CommandError("name a campaign id, or --demo (run load_demo first)")
        for campaign in found:
            self._analyse(campaign)

    def _analyse(self, campaign: Campaign) -> None:
        started = time.monotonic()
        last = [0.0]

        def progress(done: int, total: int) -> None:
            now = time.monotonic()
            if now - last[0] >= 2 or done == total:
                last[0] = now
                self.stdout.write(f"  {campaign.name}: {done} of {total} steps")

        self.stdout.write(f"Analysing {campaign.name} …")
        job = campaign_analysis_run_here(campaign=campaign, progress=progress)
        if job is None:
            self.stdout.write(f"{campaign.name}: the stored results are up to date.")
        else:
            seconds = time.monotonic() - started
            self.stdout.write(f"{campaign.name}: results stored in {seconds:.1f} s.")
