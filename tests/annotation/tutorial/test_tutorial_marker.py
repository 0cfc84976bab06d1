"""The tutorial form's span marker: offered (with the kind's severities and categories, and its
script) for the kinds that mark spans only; the lines it writes are read and checked on the
server as typed ones are, the stored offsets counted on the stored (stripped) text. The mouse
itself: tests/browser/test_tutorial_marking.py."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation.models import TutorialItem
from annotation.protocols import PROTOCOLS
from tests.factories import make_config

pytestmark = pytest.mark.django_db


def page_url(config) -> str:  # type: ignore[no-untyped-def]
    return reverse("config_tutorial", args=[config.campaign_id, config.pk])


@pytest.mark.parametrize("protocol", ["esa", "mqm"])
def test_the_form_of_a_span_kind_offers_the_marker_with_its_severities(  # type: ignore[no-untyped-def]
    as_role, campaign, protocol
) -> None:
    config = make_config(campaign, protocol, outputs_per_screen=1, items_per_task=4)
    page = as_role("owner").get(page_url(config)).content.decode()
    assert 'id="span-marker" hidden' in page
    assert "annotation/tutorial_setup.js" in page
    kind = PROTOCOLS[protocol]
    severities = re.search(r'<select class="marker-severity">(.*?)</select>', page, re.S)
    assert severities is not None
    assert re.findall(r'value="([^"]*)"', severities.group(1)) == [
        "",
        *(s.key for s in kind.severities),
    ]
    categories = re.search(r'<select class="marker-category" disabled>(.*?)</select>', page, re.S)
    if kind.categories:
        assert categories is not None
        assert re.findall(r'value="([^"]*)"', categories.group(1)) == [
            "",
            *(c.key for c in kind.categories),
        ]
    else:
        assert categories is None
    # The marker stands above the field it writes into.
    assert page.index('id="span-marker"') < page.index('name="spans"')


def test_a_kind_without_spans_has_no_marker(as_role, campaign) -> None:  # type: ignore[no-untyped-def]
    da = make_config(campaign, "direct_assessment", outputs_per_screen=1, items_per_task=4)
    page = as_role("owner").get(page_url(da)).content.decode()
    assert "span-marker" not in page
    assert "tutorial_setup.js" not in page


def test_the_markers_lines_are_stored_on_the_stripped_text_and_checked(  # type: ignore[no-untyped-def]
    as_role, campaign
) -> None:
    mqm = make_config(campaign, "mqm", outputs_per_screen=1, items_per_task=4)
    owner = as_role("owner")
    output = "\ufeffThe house 😀 is big."
    form = {"action": "add", "source": "Das Haus ist klein.", "outputs": f"  {output} \r\n"}
    start = output.index("big")
    added = owner.post(
        page_url(mqm), {**form, "spans": f"1: {start}-{start + 3} major accuracy/mistranslation"}
    )
    assert added.status_code == 302
    item = TutorialItem.objects.get()
    assert item.outputs == [output]
    [span] = item.expectation["spans"]["1"]
    assert item.outputs[0][span["start"] : span["end"]] == "big"
    assert span == {
        "start": start,
        "end": start + 3,
        "severity": "major",
        "category": "accuracy/mistranslation",
    }
    # Offsets past the text (a line written before the text was shortened) are refused.
    refused = owner.post(
        page_url(mqm), {**form, "spans": f"1: {len(output) + 1}-{len(output) + 3}"}
    )
    assert refused.status_code == 400
    assert f"within the output&#x27;s {len(output)} characters" in refused.content.decode()
    assert TutorialItem.objects.count() == 1
