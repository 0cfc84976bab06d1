"""Guidance that stays: an organizer's instructions add to a kind's own instructions and
definitions on the annotation and tutorial pages, never replace them (ESA's and MQM's minor
and major, DA's scale); MQM's typology and severities are defined on the page, folded, with
Freitag et al.'s (2021) definitions, in German too."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from annotation.protocols import KINDS, PROTOCOLS
from annotation.protocols.mqm import CATEGORIES, CATEGORY_GROUPS, TYPOLOGY_NOTE
from annotation.tutorial.items import tutorial_items_add
from tests.factories import PASSWORD, make_config
from tests.tutorial_factories import holding

pytestmark = pytest.mark.django_db

ORGANIZER = "Read the whole talk first.\nNames of people stay as they are."


class Sections(HTMLParser):
    """The text inside each element with one of ``classes`` (by class), and whether it is a
    ``<details>`` (folded)."""

    def __init__(self, classes: set[str]) -> None:
        super().__init__()
        self.classes = classes
        self.stack: list[tuple[str, str | None]] = []
        self.texts: dict[str, str] = {}
        self.folded: dict[str, bool] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br":  # a line break reads as a space (and has no end tag)
            self.handle_data(" ")
            return
        names = set((dict(attrs).get("class") or "").split())
        found = next(iter(names & self.classes), None)
        if found:
            self.texts[found] = ""
            self.folded[found] = tag == "details"
        self.stack.append((tag, found))

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            name, _found = self.stack.pop()
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        for _tag, found in self.stack:
            if found:
                self.texts[found] += data


def sections(page: str) -> Sections:
    parser = Sections(
        {
            "kind-instructions",
            "glossary-severities",
            "glossary-categories",
            "organizer-instructions",
        }
    )
    parser.feed(page)
    return parser


def flat(text: str) -> str:
    return " ".join(html.unescape(text).split())


def annotation_page(campaign, annotator, protocol: str, instructions: str, language="en") -> str:  # type: ignore[no-untyped-def]
    config = make_config(
        campaign, protocol, outputs_per_screen=1, items_per_task=4, instructions=instructions
    )
    assignment = holding(config, annotator)
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    assert client.login(username=annotator.username, password=PASSWORD)
    response = client.get(reverse("annotate", args=[assignment.pk]))
    assert response.status_code == 200
    return response.content.decode()


def severity_definitions(protocol: str) -> list[str]:
    return [str(s.definition) for s in PROTOCOLS[protocol].severities]


@pytest.mark.parametrize("protocol", ["esa", "mqm", "direct_assessment"])
def test_an_organizers_instructions_add_to_the_kinds_own(campaign, annotator, protocol) -> None:  # type: ignore[no-untyped-def]
    page = sections(annotation_page(campaign, annotator, protocol, ORGANIZER))
    kind = PROTOCOLS[protocol]
    assert flat(page.texts["kind-instructions"]) == flat(str(kind.instructions))
    organizer = flat(page.texts["organizer-instructions"])
    assert organizer == f"From the organizer of this study {flat(ORGANIZER)}"
    if kind.marks_spans:
        severities = flat(page.texts["glossary-severities"])
        for severity in kind.severities:
            assert f"{severity.label} {flat(str(severity.definition))}" in severities
        assert not page.folded["glossary-severities"]
        # ESA's built-in words for minor and major are there too.
        assert "minor" in flat(page.texts["kind-instructions"])
        assert "major" in flat(page.texts["kind-instructions"])
    else:
        assert "glossary-severities" not in page.texts
        assert "100 perfectly" in flat(page.texts["kind-instructions"])


@pytest.mark.parametrize("protocol", ["esa", "mqm", "direct_assessment"])
def test_without_an_organizers_instructions_the_page_shows_the_kinds_alone(  # type: ignore[no-untyped-def]
    campaign, annotator, protocol
) -> None:
    page = sections(annotation_page(campaign, annotator, protocol, "  \n "))
    assert flat(page.texts["kind-instructions"]) == flat(str(PROTOCOLS[protocol].instructions))
    assert "organizer-instructions" not in page.texts


def test_the_tutorial_page_keeps_the_kinds_definitions_beside_the_organizers(
    campaign, annotator
) -> None:  # type: ignore[no-untyped-def]
    config = make_config(
        campaign, "esa", outputs_per_screen=1, items_per_task=4, instructions=ORGANIZER
    )
    tutorial_items_add(
        config=config,
        items=[
            {
                "source": "Das Haus ist klein.",
                "outputs": ["The house is big."],
                "expectation": {"spans": {"1": [{"start": 13, "end": 16}]}},
            }
        ],
    )
    assignment = holding(config, annotator)
    client = Client()
    assert client.login(username=annotator.username, password=PASSWORD)
    response = client.get(reverse("tutorial", args=[assignment.pk]))
    assert response.status_code == 200
    page = sections(response.content.decode())
    assert flat(page.texts["kind-instructions"]) == flat(str(PROTOCOLS["esa"].instructions))
    assert flat(ORGANIZER) in flat(page.texts["organizer-instructions"])
    for definition in severity_definitions("esa"):
        assert flat(definition) in flat(page.texts["glossary-severities"])


def test_mqm_defines_its_typology_folded_and_its_severities_on_the_page(
    campaign, annotator
) -> None:  # type: ignore[no-untyped-def]
    page = sections(annotation_page(campaign, annotator, "mqm", ""))
    typology = flat(page.texts["glossary-categories"])
    assert page.folded["glossary-categories"]
    assert typology.startswith("Error categories (MQM typology, Freitag et al., 2021)")
    for category in (*CATEGORY_GROUPS, *CATEGORIES):
        assert f"{category.label} {flat(str(category.definition))}" in typology, category.key
    assert flat(str(TYPOLOGY_NOTE)) in typology
    # The groups come before their categories, in the order of the typology.
    assert typology.index("Accuracy The translation does not say") < typology.index(
        "Accuracy › Mistranslation"
    )
    assert typology.index("Fluency › Character encoding") < typology.index("Terminology")
    severities = flat(page.texts["glossary-severities"])
    assert "Major The error may confuse or mislead the reader" in severities
    assert "Neutral For additional information" in severities


def test_mqms_definitions_are_german_for_a_german_annotator(campaign, annotator) -> None:  # type: ignore[no-untyped-def]
    page = sections(annotation_page(campaign, annotator, "mqm", ORGANIZER, language="de"))
    with translation.override("de"):
        for category in (*CATEGORY_GROUPS, *CATEGORIES):
            german = flat(str(category.definition))
            assert german in flat(page.texts["glossary-categories"])
            with translation.override("en"):
                assert german != flat(str(category.definition)), category.key
        for severity in PROTOCOLS["mqm"].severities:
            assert flat(str(severity.definition)) in flat(page.texts["glossary-severities"])
    heading = "Von den Organisatoren dieser Studie"
    assert flat(page.texts["organizer-instructions"]).startswith(heading)


@pytest.mark.parametrize("kind", [k.PROTOCOL for k in KINDS if k.PROTOCOL.marks_spans])
def test_every_severity_and_category_of_a_span_kind_is_defined(kind) -> None:  # type: ignore[no-untyped-def]
    for term in (*kind.severities, *kind.categories, *kind.category_groups):
        assert re.search(r"\w", str(term.definition)), (kind.key, term.key)
    # Every group a category names is defined (a category without a group stands alone).
    groups = {g.key for g in kind.category_groups}
    assert {c.parent for c in kind.categories if c.parent} <= groups
