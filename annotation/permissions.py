"""Who may see and do what. One helper per object type; views and the API use only these.

- An *organizer* is a user with the ``annotation.add_campaign`` permission (the "Organizers" group
  grants it) or a superuser; organizers create campaigns.
- A campaign is visible and manageable only by its owner and its co-organizers; to everyone else it
  does not exist (404, so its existence does not leak).
- Annotators see only campaigns they are annotators of, the protocol configs of those, and their
  own assignments; to them anything else does not exist either (404).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.models import User as Account
from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.http import Http404, HttpRequest
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from rest_framework import permissions
from rest_framework.request import Request

from annotation.models import Assignment, Campaign, ProtocolConfig

ORGANIZERS_GROUP = "Organizers"

User = Account | AnonymousUser
# A page; a download may stream (StreamingHttpResponse).
View = Callable[..., HttpResponseBase]


def signed_in(request: HttpRequest | Request) -> Account:
    """The request's account, for a view behind ``login_required`` (``organizer_required``) or
    DRF's ``IsAuthenticated`` (the API's default): those let no anonymous request through, and
    this check says so to mypy. Were a view to lose its guard, an anonymous caller gets 403."""
    user = request.user
    if not user.is_authenticated:
        raise PermissionDenied
    return user


def user_is_organizer(user: User) -> bool:
    return bool(user.is_authenticated and user.has_perm("annotation.add_campaign"))


def user_has_organizer_rights(user: Account) -> bool:
    """Whether the account holds any right beyond an annotator's: staff or superuser, the
    organizer permission, or a campaign it owns or co-organizes (a right that outlives the
    permission)."""
    if getattr(user, "is_staff", False) or getattr(user, "is_superuser", False):
        return True
    if user.has_perm("annotation.add_campaign"):
        return True
    return Campaign.objects.filter(Q(owner=user) | Q(organizers=user)).exists()


def organizer_required(view: View) -> View:
    """Logged in and allowed to organize campaigns; others get 403."""

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not user_is_organizer(request.user):
            raise PermissionDenied(_("Only organizers can open this page."))
        return view(request, *args, **kwargs)

    return wrapper


class IsOrganizer(permissions.BasePermission):
    """The API's check of organizer rights; campaign lookups (404) come after it."""

    message = "Only organizers can manage campaigns."

    def has_permission(self, request: Request, view: Any) -> bool:
        return user_is_organizer(request.user)


class IsCampaignOrganizer(IsOrganizer):
    """The analysis and report APIs' organizer check (it says what they refuse)."""

    message = "Only organizers can analyse campaigns."


def campaigns_managed_by(user: User) -> QuerySet[Campaign]:
    """Campaigns the user owns or co-organizes."""
    if not user.is_authenticated:
        return Campaign.objects.none()
    return Campaign.objects.filter(Q(owner=user) | Q(organizers=user)).distinct()


def campaign_for_organizer(user: User, campaign_id: uuid.UUID | str) -> Campaign:
    """The campaign if the user manages it; otherwise 404."""
    try:
        return campaigns_managed_by(user).get(pk=campaign_id)
    except (Campaign.DoesNotExist, ValueError):
        raise Http404("No such campaign.") from None


def config_for_organizer(
    user: User, campaign_id: uuid.UUID | str, config_id: int
) -> ProtocolConfig:
    """A protocol config of a campaign the user manages (its campaign loaded); otherwise 404."""
    campaign = campaign_for_organizer(user, campaign_id)
    return get_object_or_404(
        ProtocolConfig.objects.select_related("campaign"), pk=config_id, campaign=campaign
    )


def user_can_manage_campaign(user: User, campaign: Campaign) -> bool:
    return campaigns_managed_by(user).filter(pk=campaign.pk).exists()


def campaigns_annotated_by(user: User) -> QuerySet[Campaign]:
    """Campaigns the user is an annotator of (and may therefore open tasks in)."""
    if not user.is_authenticated:
        return Campaign.objects.none()
    return Campaign.objects.filter(annotators=user).exclude(status=Campaign.Status.DRAFT)


def user_is_campaign_annotator(user: User, campaign: Campaign) -> bool:
    return campaigns_annotated_by(user).filter(pk=campaign.pk).exists()


def config_for_annotator(user: User, config_id: int) -> ProtocolConfig:
    """A protocol config (its campaign loaded) of a campaign the user annotates; otherwise 404."""
    return get_object_or_404(
        ProtocolConfig.objects.select_related("campaign"),
        pk=config_id,
        campaign__in=campaigns_annotated_by(user),
    )


def assignments_of(user: User) -> QuerySet[Assignment]:
    """The user's own assignments: the only ones an annotator sees."""
    if not user.is_authenticated:
        return Assignment.objects.none()
    return Assignment.objects.filter(annotator=user)


def assignment_for_annotator(user: User, assignment_id: uuid.UUID | str) -> Assignment:
    """The user's own assignment (task, config and campaign loaded); otherwise 404."""
    return get_object_or_404(
        assignments_of(user).select_related("task__config__campaign"), pk=assignment_id
    )
