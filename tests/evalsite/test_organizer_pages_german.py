"""The organizer's pages speak German to a German browser, as the annotator's pages do: the
campaign list and forms, the upload, the annotation set-up with its protocol form and roster, a
protocol's tasks, the analysis and its judgment import, the dashboard and its metric settings.
Every heading, column head, label, button and tooltip reads differently from the English page,
but for names that are the same in both languages (systems, users, protocols, MultEval, …)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import JudgmentImportJob, ProtocolConfig
from metrics.forms import METRIC_NAMES, TOKENIZERS
from tests.dashboard_factories import analysis_run_sync, make_judged_demo_campaign
from tests.factories import PASSWORD, make_user

pytestmark = pytest.mark.django_db

# Texts that are the same in English and German: technical names, abbreviations and data.
SAME_IN_BOTH = {
    "#",
    "p",
    "Δ",
    "τ",
    "k",
    "QC",
    "Code",
    "Name",
    "Status",
    "Format",
    "Dashboard",
    "Annotation",
    "System",
    "Cluster",
    "Annotator",
    "Items",
    "Expected Wins",
    "Expected Wins (0–1)",
    "MultEval",
    "Pearson r",
    "Spearman ρ",
    "Kendall τ",
    "DARR τ",
    "TrueSkill μ",
    "F1",
    "κ",
    "Neutral",
    "Downloads",
    "Tokenizer",
    "chrF β",
    "BLEU",
    "chrF2",
    "TER",
    "CSV",
    "TSV",
    "JSONL",
    "JSON",
    "LaTeX",
    "EvalSite",
    "Deutsch",
    "---------",
}


class Labels(HTMLParser):
    """The texts of a page's headings, column heads, labels, buttons, legends, summaries and
    captions, and its tooltips and placeholders."""

    TAGS = {"h1", "h2", "h3", "th", "label", "button", "summary", "legend", "dt", "figcaption"}

    def __init__(self) -> None:
        super().__init__()
        self.open: list[list[str]] = []
        self.texts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.open.append([tag, ""])
        self.texts += [v.strip() for k, v in attrs if k in ("title", "placeholder") and v]

    def handle_endtag(self, tag: str) -> None:
        while self.open:
            name, text = self.open.pop()
            if name in self.TAGS and text.strip():
                self.texts.append(" ".join(text.split()).rstrip(":"))
            if self.open:
                self.open[-1][1] += text
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.open:
            self.open[-1][1] += data


def labels(html: str) -> list[str]:
    parser = Labels()
    parser.feed(html)
    return parser.texts


def test_every_organizer_page_is_german_for_a_german_browser() -> None:
    owner = make_user("org", organizer=True)
    campaign = make_judged_demo_campaign(owner=owner, items_per_task=10)
    analysis_run_sync(campaign=campaign)
    config = ProtocolConfig.objects.filter(campaign=campaign).first()
    assert config is not None
    names = {campaign.name, "nmt-base", "nmt-large", "smt-phrase", "rbmt-toy", "org"}
    names |= {f"rater-{x}" for x in ("a", "b", "c", "careless")}
    names |= set(ProtocolConfig.objects.filter(campaign=campaign).values_list("name", flat=True))
    # An import the worker refused, with the problems of its file.
    job = JudgmentImportJob.objects.create(
        campaign=campaign,
        file_name="past.tsv",
        status=JudgmentImportJob.Status.FAILED,
        error="past.tsv, line 2: unknown system 'x'",
        problems=[{"file": "past.tsv", "line": 2, "message": "unknown system 'x'"}],
    )
    names |= {"past.tsv", "past.tsv, line 2: unknown system 'x'", "unknown system 'x'"}
    pages = {
        reverse("campaign_list"): "Kampagnen",
        reverse("campaign_create"): "Neue Kampagne",
        reverse("campaign_detail", args=[campaign.pk]): "Systeme und Läufe",
        reverse("campaign_edit", args=[campaign.pk]): f"{campaign.name} bearbeiten",
        reverse("campaign_upload", args=[campaign.pk]): "Daten hochladen",
        reverse("annotation_setup", args=[campaign.pk]): "Ein Protokoll hinzufügen",
        reverse("config_tasks", args=[campaign.pk, config.pk]): "Eine Aufgabe zuweisen",
        reverse("campaign_analysis", args=[campaign.pk]): "Analyse der menschlichen Bewertungen",
        # The stored results' keys and English labels, named in German on the page.
        reverse("campaign_analysis", args=[campaign.pk]) + "#stored": (
            "Adequacy and fluency · Adäquatheit",
            "bestanden",
            "κ zwischen Annotatoren",
            "Übereinstimmungen",
            "Bewertungen: z-Werte; Cluster durch den einseitigen Wilcoxon-Vorzeichen-Rang-Test.",
        ),
        reverse("campaign_dashboard", args=[campaign.pk]) + "#stored": (
            "Adequacy and fluency · Flüssigkeit",
            "durchgefallen",
            "normalisiert über echte und wiederholte Items, QC mit gepaarter t-Test",
        ),
        reverse("campaign_judgment_import", args=[campaign.pk]): "Bewertungen importieren",
        reverse("campaign_judgment_import_job", args=[campaign.pk, job.pk]): (
            "Import von Bewertungen",
            "Fehlgeschlagen",
        ),
        reverse("campaign_dashboard", args=[campaign.pk]): "Fortschritt der Annotation",
        reverse("analysis_settings", args=[campaign.pk]): "Analyseeinstellungen",
        reverse("crowd_setup", args=[campaign.pk]) + "?worker=nobody": "Crowdworker",
    }
    same = SAME_IN_BOTH | {*METRIC_NAMES, *TOKENIZERS}  # the metric settings' keys
    clients = {}
    for language in ("en", "de"):
        clients[language] = Client(HTTP_ACCEPT_LANGUAGE=language)
        assert clients[language].login(username="org", password=PASSWORD)
    for url, heading in pages.items():
        shown = {}
        for language, client in clients.items():
            response = client.get(url)
            assert response.status_code == 200, url
            shown[language] = response.content.decode()
        for german in (heading,) if isinstance(heading, str) else heading:
            assert german in shown["de"], (url, german)
        english = set(labels(shown["en"]))
        untranslated = {
            text
            for text in english & set(labels(shown["de"]))
            if text not in same and not any(name in text for name in names)
        }
        assert not untranslated, (url, sorted(untranslated))
