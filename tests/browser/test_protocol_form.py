"""In a real Chromium: the "Add a protocol" form offers the chosen kind's modes only, and no
"outputs per screen" for direct assessment, which shows one output a screen, and MQM's weights
for MQM only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.annotator_pages import log_in
from tests.factories import make_rich_campaign, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _offered(page: Any) -> list[str]:
    return [
        value
        for value in page.eval_on_selector_all(
            "#id_mode option", "options => options.filter(o => !o.disabled).map(o => o.value)"
        )
        if value
    ]


def test_the_protocol_form_offers_the_kinds_own_modes(  # type: ignore[no-untyped-def]
    page, live_server, output_dir: Path
) -> None:
    owner = make_user("pia", organizer=True)
    campaign = make_rich_campaign(owner=owner)
    log_in(page, live_server, "pia", lands_on="**/campaigns/")
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/annotation/")

    page.select_option("#id_protocol", "direct_assessment")
    assert _offered(page) == ["source", "reference"]
    assert page.input_value("#id_mode") in ("source", "reference")
    assert page.is_hidden("#id_outputs_per_screen")
    assert page.is_hidden("#id_fluency_first")
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    page.locator("form.stacked").first.screenshot(path=shots / "protocol-form-da.png")

    page.select_option("#id_protocol", "ranking")
    assert _offered(page) == ["bilingual", "monolingual"]
    assert page.input_value("#id_mode") in ("bilingual", "monolingual")
    assert page.is_visible("#id_outputs_per_screen")
    assert page.is_hidden("#id_fluency_first")
    assert page.is_hidden("#id_mqm_major")
    page.select_option("#id_protocol", "mqm")
    assert page.is_visible("#id_mqm_major")
    assert page.input_value("#id_mqm_non_translation") == "25.0"
    page.select_option("#id_protocol", "adequacy_fluency")
    assert page.is_visible("#id_fluency_first")
    assert page.is_hidden("#id_mqm_minor_punctuation")
    page.select_option("#id_protocol", "ranking")

    # What the form sends is accepted: the protocol is added.
    page.fill("#id_name", "Ranks")
    page.click("form.stacked button.primary")
    page.wait_for_selector(".messages")
    assert "Protocol added." in page.inner_text(".messages")


def test_the_protocol_form_offers_document_screens_where_the_kind_has_them(  # type: ignore[no-untyped-def]
    page, live_server, output_dir: Path
) -> None:
    from annotation.models import ProtocolConfig

    owner = make_user("pia", organizer=True)
    campaign = make_rich_campaign(owner=owner)
    log_in(page, live_server, "pia", lands_on="**/campaigns/")
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/annotation/")

    page.select_option("#id_protocol", "ranking")
    assert page.is_hidden("#id_screen")
    assert page.is_hidden("#id_document_window")
    assert page.is_hidden("#id_document_score")
    page.select_option("#id_protocol", "esa")
    assert page.is_visible("#id_screen")
    assert page.is_hidden("#id_document_window")
    assert page.is_hidden("#id_document_score")
    assert page.is_visible("#id_outputs_per_screen")
    page.select_option("#id_screen", "document")
    assert page.is_visible("#id_document_window")
    assert page.is_visible("#id_document_score")
    page.check("#id_document_score")
    assert page.is_hidden("#id_outputs_per_screen")
    page.fill("#id_document_window", "6")
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    page.locator("form.stacked").first.screenshot(path=shots / "protocol-form-documents.png")
    # Switching to a kind without them takes the choice back.
    page.select_option("#id_protocol", "adequacy_fluency")
    assert page.input_value("#id_screen") == "segment"
    assert page.is_hidden("#id_document_window")
    assert not page.is_checked("#id_document_score")
    page.select_option("#id_protocol", "esa")
    page.select_option("#id_screen", "document")
    page.check("#id_document_score")

    page.fill("#id_name", "ESA documents")
    page.click("form.stacked button.primary")
    page.wait_for_selector(".messages")
    assert "Protocol added." in page.inner_text(".messages")
    config = ProtocolConfig.objects.get(campaign=campaign, name="ESA documents")
    assert (config.screen, config.document_window, config.document_score) == ("document", 6, True)
    assert "document screens of up to 6 segments · document-level score" in page.inner_text(
        "#protocols"
    )


def test_choosing_a_preset_fills_the_form_which_stays_editable(  # type: ignore[no-untyped-def]
    page, live_server, output_dir: Path
) -> None:
    from annotation.models import ProtocolConfig

    owner = make_user("pia", organizer=True)
    campaign = make_rich_campaign(owner=owner)
    log_in(page, live_server, "pia", lands_on="**/campaigns/")
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/annotation/")
    assert page.viewport_size == {"width": 1280, "height": 900}

    # Choosing a kind sets its own k: ESA shows one translation a screen.
    page.select_option("#id_protocol", "esa")
    assert page.input_value("#id_outputs_per_screen") == "1"
    page.select_option("#id_protocol", "ranking")
    assert page.input_value("#id_outputs_per_screen") == "5"

    page.select_option("#id_preset", "google_mqm")
    assert page.input_value("#id_protocol") == "mqm"
    assert page.input_value("#id_mode") == "source"
    assert page.input_value("#id_screen") == "document"
    assert not page.is_checked("#id_document_score")
    assert page.is_visible("#id_mqm_major")
    assert page.input_value("#id_qc_bad_reference") == "0"

    page.select_option("#id_preset", "wmt_esa")
    assert page.input_value("#id_protocol") == "esa"
    assert page.input_value("#id_screen") == "document"
    assert page.input_value("#id_document_window") == "0"
    assert page.is_checked("#id_document_score")
    assert page.is_hidden("#id_outputs_per_screen")
    assert page.is_hidden("#id_mqm_major")
    assert [page.input_value(f"#id_qc_{k}") for k in ("bad_reference", "repeat", "reference")] == [
        "12",
        "8",
        "0",
    ]
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    page.locator("form.stacked").first.screenshot(path=shots / "protocol-form-preset-esa.png")

    # The organizer changes a field the preset filled: the change is what is stored.
    page.fill("#id_qc_repeat", "5")
    page.fill("#id_name", "WMT ESA")
    page.click("form.stacked button.primary")
    page.wait_for_selector(".messages")
    assert "Protocol added." in page.inner_text(".messages")
    config = ProtocolConfig.objects.get(campaign=campaign, name="WMT ESA")
    assert (config.protocol, config.mode, config.outputs_per_screen) == ("esa", "source", 1)
    assert (config.screen, config.document_window, config.document_score) == ("document", 0, True)
    assert (config.items_per_task, config.qc_bad_reference, config.qc_repeat) == (100, 12, 5)
    assert config.qc_reference == 0
