"""REST API of a campaign's protocols: list them, and add one (optionally from a preset,
annotation/protocols/presets.py) through the setup page's form. Owner and co-organizers only."""

from __future__ import annotations

from typing import Any

from django.forms import model_to_dict
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.campaigns.forms import ProtocolConfigForm
from annotation.models import ProtocolConfig
from annotation.permissions import IsOrganizer, campaign_for_organizer
from annotation.protocols.presets import PROTOCOL_PRESETS, preset_applied
from annotation.tasking.configs import protocol_config_add
from evalsite.parsers import JSONParser

# The config's fields as the form names them.
FIELDS = list(ProtocolConfigForm.Meta.fields)


def config_json(config: ProtocolConfig) -> dict[str, Any]:
    """A protocol config as the API gives it: its id, the form's fields and its settings."""
    return {"id": config.pk, **model_to_dict(config, fields=FIELDS), "settings": config.settings}


def request_fields(data: dict[str, Any]) -> dict[str, Any]:
    """The form's data for an API request: each field the request leaves out has its preset's
    value, else the model's default (a form reads an absent box as unticked, an API client
    means "the default"), and k left out is the kind's own (the form fills it in)."""
    defaults = {
        k: v
        for k, v in model_to_dict(ProtocolConfig(), fields=FIELDS).items()
        if v is not None and k != "outputs_per_screen"
    }
    preset = data.get("preset")
    given = (
        preset_applied(preset, data)
        if isinstance(preset, str) and preset in PROTOCOL_PRESETS
        else data
    )
    return {**defaults, **given}


class ProtocolsView(APIView):
    permission_classes = [permissions.IsAuthenticated, IsOrganizer]
    parser_classes = [JSONParser]

    @extend_schema(
        responses=OpenApiTypes.OBJECT,
        description="The campaign's protocols, oldest first, with their settings.",
    )
    def get(self, request: Request, campaign_id: Any) -> Response:
        campaign = campaign_for_organizer(request.user, campaign_id)
        configs = ProtocolConfig.objects.filter(campaign=campaign).order_by("created")
        return Response({"protocols": [config_json(c) for c in configs]})

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        responses={201: OpenApiTypes.OBJECT},
        description="Add a protocol: the fields of the setup page's form (docs/annotation.md), "
        f"and optionally `preset` ({', '.join(PROTOCOL_PRESETS)}), whose values fill in the "
        "fields the request leaves out. `outputs_per_screen` left out is the kind's own "
        "(1 for ESA and MQM). 400 names each refused field.",
    )
    def post(self, request: Request, campaign_id: Any) -> Response:
        campaign = campaign_for_organizer(request.user, campaign_id)
        if not isinstance(request.data, dict):
            return Response(
                {"detail": "Send the protocol's fields as a JSON object."},
                status=status.HTTP_400_BAD_REQUEST,
            )
        form = ProtocolConfigForm(
            request_fields(dict(request.data)), instance=ProtocolConfig(campaign=campaign)
        )
        config = protocol_config_add(form=form, campaign=campaign) if form.is_valid() else None
        if config is None:
            errors = {
                "non_field_errors" if name == "__all__" else name: [str(m) for m in messages]
                for name, messages in form.errors.items()
            }
            return Response(errors, status=status.HTTP_400_BAD_REQUEST)
        return Response(config_json(config), status=status.HTTP_201_CREATED)
