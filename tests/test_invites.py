"""Invite links: signed, expiring; opening one creates or logs in the annotator account of the
campaign, and the same link brings the same person back."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Invite
from annotation.tasking import invite_create, invite_token
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture
def invite(campaign, owner):  # type: ignore[no-untyped-def]
    return invite_create(campaign=campaign, label="Maria Garcia", created_by=owner)


def url(invite: Invite) -> str:
    return reverse("invite", args=[invite_token(invite=invite)])


def test_opening_an_invite_creates_an_annotator_account_and_logs_it_in(
    client, invite, campaign
) -> None:  # type: ignore[no-untyped-def]
    page = client.get(url(invite))
    assert page.status_code == 200
    assert campaign.name in page.content.decode()
    response = client.post(url(invite))
    assert response.status_code == 302
    assert response["Location"] == reverse("my_tasks")
    invite.refresh_from_db()
    user = invite.user
    assert user.username.startswith("maria-garcia-")
    assert not user.has_usable_password()
    assert campaign.annotators.filter(pk=user.pk).exists()
    assert client.get(reverse("my_tasks")).context["user"] == user


def test_the_same_link_logs_the_same_annotator_in_again(invite) -> None:  # type: ignore[no-untyped-def]
    first, second = Client(), Client()
    first.post(url(invite))
    second.post(url(invite))
    invite.refresh_from_db()
    assert second.get(reverse("my_tasks")).context["user"] == invite.user
    assert Invite.objects.get().user == invite.user


def test_a_logged_in_user_who_opens_a_fresh_link_becomes_its_annotator(
    invite, campaign, other_organizer
) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    client.login(username=other_organizer.username, password=PASSWORD)
    client.post(url(invite))
    invite.refresh_from_db()
    assert invite.user == other_organizer
    assert campaign.annotators.filter(pk=other_organizer.pk).exists()


@pytest.mark.parametrize("spoil", ["expired", "revoked", "tampered"])
def test_an_expired_withdrawn_or_tampered_link_is_refused(client, invite, spoil) -> None:  # type: ignore[no-untyped-def]
    link = url(invite)
    if spoil == "expired":
        Invite.objects.filter(pk=invite.pk).update(expires_at=timezone.now() - timedelta(days=1))
    elif spoil == "revoked":
        Invite.objects.filter(pk=invite.pk).update(revoked=True)
    else:
        link = link[:-3] + ("aaa/" if not link.endswith("aaa/") else "bbb/")
    response = client.post(link)
    assert response.status_code == 410
    invite.refresh_from_db()
    assert invite.user is None


def test_organizers_create_and_withdraw_links_on_the_annotation_page(campaign, owner) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    client.login(username=owner.username, password=PASSWORD)
    client.post(
        reverse("invites_create", args=[campaign.pk]), {"label": "Group", "count": 3, "days": 7}
    )
    assert Invite.objects.filter(campaign=campaign).count() == 3
    page = client.get(reverse("annotation_setup", args=[campaign.pk])).content.decode()
    assert page.count("data-invite-url") == 3
    first = Invite.objects.first()
    client.post(reverse("invite_revoke", args=[campaign.pk, first.pk]))
    first.refresh_from_db()
    assert first.revoked
