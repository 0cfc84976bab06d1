"""The organizer's protocol settings form: a mode the protocol offers, fluency first only for
adequacy and fluency, at most 60 QC items per 100, and ranking screens of at most 9 outputs
(each rank is typed as one digit)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.utils import translation

from annotation.campaigns.forms import MAX_HOLD_MINUTES, ProtocolConfigForm
from annotation.models import ProtocolConfig
from annotation.protocols import PROTOCOLS
from tests.factories import make_campaign, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def english() -> Iterator[None]:
    # The messages are checked in English; a German request in an earlier test of the same
    # process leaves German active in this thread (LocaleMiddleware does not reset it).
    with translation.override("en"):
        yield


def form(**changes: Any) -> ProtocolConfigForm:
    data: dict[str, Any] = {
        "name": "Main",
        "protocol": "adequacy_fluency",
        "mode": "bilingual",
        "outputs_per_screen": 5,
        "items_per_task": 100,
        "annotations_per_task": 1,
        "qc_bad_reference": 10,
        "qc_repeat": 5,
        "qc_reference": 5,
        "context_segments": 1,
        "hold_minutes": 120,
        "seed": 12345,
        "instructions": "",
    }
    data.update(changes)
    return ProtocolConfigForm(data=data)


def test_the_default_settings_are_valid() -> None:
    assert form().is_valid(), form().errors


@pytest.mark.parametrize("k", [2, 9])
def test_ranking_accepts_up_to_nine_outputs_per_screen(k: int) -> None:
    assert form(protocol="ranking", outputs_per_screen=k).is_valid()


@pytest.mark.parametrize("k", [10, 20])
def test_ranking_refuses_ten_or_more_outputs_per_screen_with_the_reason(k: int) -> None:
    bound = form(protocol="ranking", outputs_per_screen=k)
    assert not bound.is_valid()
    (message,) = bound.errors["outputs_per_screen"]
    assert "at most 9 translations per screen" in message


def test_adequacy_and_fluency_keep_screens_of_more_than_nine_outputs() -> None:
    assert form(outputs_per_screen=12).is_valid()


@pytest.mark.parametrize(
    ("protocol", "mode", "valid"),
    [
        ("adequacy_fluency", "bilingual", True),
        ("adequacy_fluency", "monolingual", True),
        ("adequacy_fluency", "source", False),
        ("ranking", "monolingual", True),
        ("ranking", "reference", False),
        ("direct_assessment", "source", True),
        ("direct_assessment", "reference", True),
        ("direct_assessment", "bilingual", False),
    ],
)
def test_a_mode_must_be_one_the_protocol_offers(protocol: str, mode: str, valid: bool) -> None:
    bound = form(protocol=protocol, mode=mode)
    assert bound.is_valid() == valid
    if not valid:
        (message,) = bound.errors["mode"]
        assert "offers:" in message


@pytest.mark.parametrize(
    ("protocol", "mode", "valid"),
    [
        ("adequacy_fluency", "bilingual", True),
        ("adequacy_fluency", "monolingual", True),
        ("ranking", "bilingual", False),
        ("direct_assessment", "source", False),
    ],
)
def test_fluency_first_is_only_for_adequacy_and_fluency(
    protocol: str, mode: str, valid: bool
) -> None:
    bound = form(protocol=protocol, mode=mode, fluency_first=True)
    assert bound.is_valid() == valid
    if not valid:
        assert bound.errors["fluency_first"] == ["Only adequacy and fluency has this option."]


@pytest.mark.parametrize(
    ("bad", "repeat", "reference", "valid"),
    [(20, 20, 20, True), (30, 20, 11, False), (50, 10, 0, True), (51, 0, 0, False)],
)
def test_at_most_sixty_of_every_hundred_items_are_qc_items(
    bad: int, repeat: int, reference: int, valid: bool
) -> None:
    bound = form(qc_bad_reference=bad, qc_repeat=repeat, qc_reference=reference)
    assert bound.is_valid() == valid
    if not valid and bad <= 50:
        assert bound.non_field_errors() == ["At most 60 of every 100 items can be QC items."]
    if bad > 50:
        assert "qc_bad_reference" in bound.errors  # each share is capped at 50 as well


def test_a_hold_of_more_than_a_year_is_refused() -> None:
    # On SQLite (the embedded default) nothing bounded it: a hold of 10¹² minutes was
    # accepted and every pull of the protocol then failed computing "now + hold".
    assert form(hold_minutes=MAX_HOLD_MINUTES).is_valid()
    for minutes in (MAX_HOLD_MINUTES + 1, 10**9, 10**12):
        bound = form(hold_minutes=minutes)
        assert not bound.is_valid()
        assert bound.errors["hold_minutes"] == [
            f"Ensure this value is less than or equal to {MAX_HOLD_MINUTES}."
        ]


def test_the_form_tells_the_page_each_kinds_modes_and_which_show_one_output() -> None:
    attrs = form().fields["protocol"].widget.attrs
    assert json.loads(attrs["data-modes"]) == {
        key: [m.key for m in kind.modes] for key, kind in PROTOCOLS.items()
    }
    assert json.loads(attrs["data-modes"])["direct_assessment"] == ["source", "reference"]
    assert json.loads(attrs["data-single-output"]) == ["direct_assessment"]
    assert json.loads(attrs["data-fluency-first"]) == ["adequacy_fluency"]
    assert json.loads(attrs["data-document-screens"]) == ["direct_assessment", "esa", "mqm"]


@pytest.mark.parametrize("protocol", ["direct_assessment", "esa", "mqm"])
def test_a_kind_that_judges_one_output_at_a_time_may_show_documents(protocol: str) -> None:
    bound = form(
        protocol=protocol, mode="source", screen="document", document_window=8, outputs_per_screen=1
    )
    assert bound.is_valid(), bound.errors
    config = bound.save(commit=False)
    assert (config.screen, config.document_window) == ("document", 8)


@pytest.mark.parametrize("protocol", ["ranking", "adequacy_fluency"])
def test_a_kind_that_compares_outputs_of_a_segment_has_no_document_screens(protocol: str) -> None:
    bound = form(protocol=protocol, screen="document")
    assert not bound.is_valid()
    assert "has no document screens" in bound.errors["screen"][0]


def test_a_form_without_the_screen_fields_asks_for_segment_screens() -> None:
    bound = form()
    assert bound.is_valid(), bound.errors
    config = bound.save(commit=False)
    assert (config.screen, config.document_window) == ("segment", 0)


def test_a_pull_mode_refuses_document_screens_and_keeps_merging() -> None:
    bound = form(
        protocol="direct_assessment",
        mode="source",
        screen="document",
        outputs_per_screen=1,
        allocation="adaptive",
    )
    assert not bound.is_valid()
    assert bound.errors["allocation"] == [
        "Pull modes choose one screen at a time: use segment screens."
    ]
    # On segment screens a pull mode merges identical outputs as a prebuilt build does.
    bound = form(
        protocol="direct_assessment", mode="source", allocation="adaptive", merge_identical="on"
    )
    assert bound.is_valid(), bound.errors
    assert bound.save(commit=False).merge_identical is True


def test_an_edit_keeps_the_mark_of_scores_imported_standardised() -> None:
    campaign = make_campaign(owner=make_user("importer", organizer=True))
    config = ProtocolConfig.objects.create(
        campaign=campaign,
        name="Imported",
        protocol="direct_assessment",
        mode=PROTOCOLS["direct_assessment"].modes[0].key,
        settings={"scores": "standardised"},
    )
    data = form(protocol="direct_assessment", mode=config.mode, name="Renamed").data
    edited = ProtocolConfigForm(data=data, instance=config)
    assert edited.is_valid(), edited.errors
    edited.save()
    config.refresh_from_db()
    assert config.name == "Renamed"
    assert config.scores_standardised


@pytest.mark.parametrize(
    ("protocol", "mode", "k"),
    [("esa", "source", 1), ("mqm", "source", 1), ("ranking", "bilingual", 5)],
)
def test_k_left_out_is_the_kinds_own(protocol: str, mode: str, k: int) -> None:
    # ESA and MQM show one translation a screen, as WMT and Google run them.
    bound = form(protocol=protocol, mode=mode, outputs_per_screen="")
    assert bound.is_valid(), bound.errors
    assert bound.cleaned_data["outputs_per_screen"] == k
    defaults = json.loads(bound.fields["protocol"].widget.attrs["data-default-outputs"])
    assert defaults[protocol] == k
