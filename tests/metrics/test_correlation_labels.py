"""Stored correlations keep the criterion labels and the name of the human score of the language
they were computed in; the dashboard names them in the page's language, as the other panels
do."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from metrics.models import AnalysisResult
from tests.dashboard_factories import analysis_run_sync, make_judged_demo_campaign
from tests.factories import PASSWORD, make_user

pytestmark = pytest.mark.django_db


def headings(html: str) -> list[str]:
    """The criterion headings of the correlations section, tags removed."""
    section = html[html.index('<section id="correlations"') :]
    section = section[: section.index("</section>")]
    return [
        " ".join(re.sub(r"<[^>]+>", " ", h).split())
        for h in re.findall(r'<h3 id="corr-[^"]*">(.*?)</h3>', section, flags=re.S)
    ]


def test_the_correlations_are_named_in_the_pages_language() -> None:
    owner = make_user("org", organizer=True)
    campaign = make_judged_demo_campaign(owner=owner, items_per_task=10)
    with translation.override("en"):
        analysis_run_sync(campaign=campaign)
    url = reverse("campaign_dashboard", args=[campaign.pk])
    shown = {}
    for language in ("en", "de"):
        client = Client(HTTP_ACCEPT_LANGUAGE=language)
        assert client.login(username="org", password=PASSWORD)
        shown[language] = headings(client.get(url).content.decode())
    assert any("· Adequacy human score: mean z-score" in h for h in shown["en"]), shown["en"]
    assert any("· Adäquatheit menschliche Bewertung: mittlerer z-Wert" in h for h in shown["de"]), (
        shown["de"]
    )
    assert any("Expected Wins" in h for h in shown["de"])
    assert len(shown["en"]) == len(shown["de"]) > 2
    # The protocols' names are the organizer's; what follows them is German.
    criteria = [h.split(" · ", 1)[1] for h in shown["de"]]
    assert not any("Adequacy" in c or "Fluency" in c or "mean z" in c for c in criteria), criteria


def test_the_darr_pair_counts_agree_in_number_in_the_pages_language() -> None:
    """Each DARR cell counts its pairs with the plural form of its number: "1 pair",
    "2 pairs", "1 Paar", "2 Paare" — the counts those of the stored correlations."""
    owner = make_user("org", organizer=True)
    campaign = make_judged_demo_campaign(owner=owner, items_per_task=10)
    with translation.override("en"):
        job = analysis_run_sync(campaign=campaign)
    stored = AnalysisResult.objects.get(job=job, kind=AnalysisResult.Kind.CORRELATIONS).data
    pairs = sorted(
        entry["segment"]["darr"]["pairs"]
        for criterion in stored["criteria"]
        for entry in criterion["metrics"]
        if entry["segment"].get("darr", {}).get("tau") is not None
    )
    assert pairs
    url = reverse("campaign_dashboard", args=[campaign.pk])
    words = {"en": ("pair", "pairs"), "de": ("Paar", "Paare")}
    for language, (one, more) in words.items():
        client = Client(HTTP_ACCEPT_LANGUAGE=language)
        assert client.login(username="org", password=PASSWORD)
        html = client.get(url).content.decode()
        cells = re.findall(r'<span class="hint" title="[^"]*">([\d,.]+) (\w+)</span>', html)
        shown = sorted(int(re.sub(r"\D", "", n)) for n, _word in cells)
        assert shown == pairs, language
        for number, word in cells:
            assert word == (one if number == "1" else more), (language, number, word)
