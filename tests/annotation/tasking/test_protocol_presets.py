"""Protocol presets on the setup form and the API: a preset creates a config with exactly its
published settings, a field given beside it wins, and k left out is the kind's own."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.forms import model_to_dict
from django.test import Client

from annotation.campaigns.forms import ProtocolConfigForm
from annotation.models import ProtocolConfig
from annotation.protocols.mqm import Weights
from annotation.protocols.presets import PROTOCOL_PRESETS
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

# What each preset must set, written out from the publications (docs/annotation.md), not read
# from the presets module.
WMT_ESA = {
    "protocol": "esa",
    "mode": "source",
    "outputs_per_screen": 1,
    "screen": "document",
    "document_window": 0,
    "document_score": True,
    "items_per_task": 100,
    "qc_bad_reference": 12,
    "qc_repeat": 8,
    "qc_reference": 0,
}
GOOGLE_MQM = {
    "protocol": "mqm",
    "mode": "source",
    "outputs_per_screen": 1,
    "screen": "document",
    "document_window": 0,
    "document_score": False,
    "qc_bad_reference": 0,
    "qc_repeat": 0,
    "qc_reference": 0,
}
GOOGLES_WEIGHTS = {
    "major": 5.0,
    "minor": 1.0,
    "neutral": 0.0,
    "minor_punctuation": 0.1,
    "non_translation": 25.0,
}
EXPECTED = {"wmt_esa": WMT_ESA, "google_mqm": GOOGLE_MQM}
SETTINGS = {"wmt_esa": {}, "google_mqm": {"weights": GOOGLES_WEIGHTS}}


def _client(user: Any) -> Client:
    client = Client()
    assert client.login(username=user.get_username(), password=PASSWORD)
    return client


def _post(client: Client, campaign: Any, body: Any) -> Any:
    return client.post(
        f"/api/campaigns/{campaign.pk}/protocols/",
        data=json.dumps(body),
        content_type="application/json",
    )


def _fields(config: ProtocolConfig, names: Any) -> dict[str, Any]:
    return {name: getattr(config, name) for name in names}


def _page_data(preset: str) -> dict[str, Any]:
    """What the page posts after the preset was chosen: the form's initial values with the
    preset's filled in, as static/annotation/protocol_form.js fills them (a box unticked is
    left out)."""
    defaults = model_to_dict(ProtocolConfig(), fields=ProtocolConfigForm._meta.fields)
    data = {k: v for k, v in defaults.items() if v is not None}
    data.update({**PROTOCOL_PRESETS[preset].values, "name": "Main", "preset": preset})
    return {k: v for k, v in data.items() if v is not False}


def test_the_presets_are_the_two_published_designs() -> None:
    assert set(PROTOCOL_PRESETS) == set(EXPECTED)


@pytest.mark.parametrize("preset", sorted(EXPECTED))
def test_the_form_filled_in_by_a_preset_creates_exactly_its_settings(
    preset: str, campaign: Any
) -> None:
    form = ProtocolConfigForm(_page_data(preset), instance=ProtocolConfig(campaign=campaign))
    assert form.is_valid(), form.errors
    config = form.save()
    assert _fields(config, EXPECTED[preset]) == EXPECTED[preset]
    assert config.settings == SETTINGS[preset]


@pytest.mark.parametrize("preset", sorted(EXPECTED))
def test_the_api_creates_a_preset_from_its_name_alone(
    preset: str, campaign: Any, owner: Any
) -> None:
    response = _post(_client(owner), campaign, {"name": "Main", "preset": preset})
    assert response.status_code == 201, response.json()
    config = ProtocolConfig.objects.get(pk=response.json()["id"])
    assert _fields(config, EXPECTED[preset]) == EXPECTED[preset]
    assert config.settings == SETTINGS[preset]
    # Every other field keeps the model's default.
    others = set(ProtocolConfigForm._meta.fields or ()) - set(EXPECTED[preset]) - {"name"}
    default = ProtocolConfig()
    assert {n: getattr(config, n) for n in others} == {n: getattr(default, n) for n in others}
    assert response.json()["outputs_per_screen"] == 1
    assert response.json()["settings"] == SETTINGS[preset]


def test_a_field_given_beside_a_preset_wins(campaign: Any, owner: Any) -> None:
    response = _post(
        _client(owner),
        campaign,
        {"name": "Main", "preset": "google_mqm", "qc_bad_reference": 10, "mqm_minor": 2},
    )
    assert response.status_code == 201, response.json()
    config = ProtocolConfig.objects.get(pk=response.json()["id"])
    assert config.qc_bad_reference == 10
    assert config.screen == "document"
    assert Weights.from_json(config.settings["weights"]) == Weights(minor=2.0)


def test_an_unknown_preset_is_refused_naming_the_field(campaign: Any, owner: Any) -> None:
    response = _post(_client(owner), campaign, {"name": "Main", "preset": "appraise"})
    assert response.status_code == 400
    assert "preset" in response.json()
    assert not ProtocolConfig.objects.filter(campaign=campaign).exists()


@pytest.mark.parametrize(
    ("protocol", "mode", "k"),
    [("esa", "source", 1), ("mqm", "source", 1), ("adequacy_fluency", "bilingual", 5)],
)
def test_k_left_out_is_the_kinds_own(
    protocol: str, mode: str, k: int, campaign: Any, owner: Any
) -> None:
    response = _post(_client(owner), campaign, {"name": "Main", "protocol": protocol, "mode": mode})
    assert response.status_code == 201, response.json()
    assert ProtocolConfig.objects.get(pk=response.json()["id"]).outputs_per_screen == k


def test_the_api_lists_the_campaigns_protocols(campaign: Any, owner: Any) -> None:
    client = _client(owner)
    created = _post(client, campaign, {"name": "Main", "preset": "wmt_esa"}).json()
    listed = client.get(f"/api/campaigns/{campaign.pk}/protocols/").json()["protocols"]
    assert listed[-1] == created


def test_a_body_that_is_not_an_object_is_a_400(campaign: Any, owner: Any) -> None:
    response = _post(_client(owner), campaign, ["wmt_esa"])
    assert response.status_code == 400
    assert "detail" in response.json()
