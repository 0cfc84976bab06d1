"""REST API of a pull-mode config's allocation state. Owner and co-organizers only."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import permissions
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import AllocationState
from annotation.permissions import IsOrganizer, config_for_organizer
from annotation.tasking.pull_state import allocation_summary


class AllocationView(APIView):
    permission_classes = [permissions.IsAuthenticated, IsOrganizer]

    @extend_schema(
        responses=OpenApiTypes.OBJECT,
        description="The allocation of a protocol config: its mode (prebuilt, adaptive, top_k), "
        "budget and decision level, the judgments stored and allocated, the adjacent pairs of "
        "the current ranking (system names, anytime-valid p of the higher being better, decided "
        "or not), and whether the stopping rule holds (decided, budget, or null).",
    )
    def get(self, request: Request, campaign_id: Any, config_id: int) -> Response:
        config = config_for_organizer(request.user, campaign_id, config_id)
        campaign = config.campaign
        state = AllocationState.objects.filter(config=config).first()
        names = dict(campaign.systems.values_list("pk", "name"))  # type: ignore[attr-defined]
        return Response(allocation_summary(config, state, names).to_json())
