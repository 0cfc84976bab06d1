"""Invite links: signed, expiring; opening one creates or logs in the annotator account of the
campaign, and the same link brings the same person back. A logged-in user who opens a link joins as
themselves, and a link never logs anyone in as an account with a password or organizer rights."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.core import signing
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Invite
from annotation.tasking.invites import INVITE_SALT, invite_create, invite_token
from annotation.tasking.views import INVITES_SHOWN
from tests.factories import PASSWORD, make_campaign, make_user

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


def test_an_organizer_who_opens_a_link_stays_themselves_and_becomes_an_annotator(
    invite, campaign, other_organizer
) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    client.login(username=other_organizer.username, password=PASSWORD)
    response = client.post(url(invite))
    assert response.status_code == 302
    assert client.get(reverse("my_tasks")).context["user"] == other_organizer
    assert campaign.annotators.filter(pk=other_organizer.pk).exists()
    invite.refresh_from_db()
    assert invite.user is None  # the link is not a way to log in as the organizer
    assert invite.used_at is not None


def test_after_an_organizer_used_a_link_an_anonymous_visitor_gets_the_links_own_account(
    invite, campaign, owner
) -> None:  # type: ignore[no-untyped-def]
    organizer = Client()
    organizer.login(username=owner.username, password=PASSWORD)
    organizer.post(url(invite))
    stranger = Client()
    response = stranger.post(url(invite))
    assert response.status_code == 302
    user = stranger.get(reverse("my_tasks")).context["user"]
    assert user != owner
    assert user.username.startswith("maria-garcia-")
    assert not user.has_usable_password()
    invite.refresh_from_db()
    assert invite.user == user
    # The organizer's session is untouched and theirs alone.
    assert organizer.get(reverse("my_tasks")).context["user"] == owner


def test_a_logged_in_annotator_opening_someone_elses_used_link_stays_themselves(
    invite, annotator
) -> None:  # type: ignore[no-untyped-def]
    Client().post(url(invite))
    invite.refresh_from_db()
    link_account = invite.user
    client = Client()
    client.login(username=annotator.username, password=PASSWORD)
    client.post(url(invite))
    assert client.get(reverse("my_tasks")).context["user"] == annotator
    invite.refresh_from_db()
    assert invite.user == link_account


@pytest.mark.parametrize("kind", ["password", "staff", "organizer"])
def test_a_link_bound_to_an_account_with_rights_never_logs_anyone_in(
    invite, campaign, owner, kind
) -> None:  # type: ignore[no-untyped-def]
    """Links bound before the fix (or by hand in the admin) to a real account are refused."""
    if kind == "password":
        target = make_user("has-password")
    elif kind == "staff":
        target = make_user("staff-member", is_staff=True)
        target.set_unusable_password()
        target.save()
    else:
        target = owner
    Invite.objects.filter(pk=invite.pk).update(user=target)
    client = Client()
    response = client.post(url(invite))
    assert response.status_code == 403
    assert "_auth_user_id" not in client.session
    assert "ask the organizer for a new link" in response.content.decode()


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


def test_withdrawing_a_link_that_does_not_exist_says_so(campaign, owner) -> None:  # type: ignore[no-untyped-def]
    """Not 'Invite link withdrawn.' for a wrong id (a stale page, another campaign's link)."""
    client = Client()
    client.login(username=owner.username, password=PASSWORD)
    other = make_campaign(owner=owner, name="Other")
    elsewhere = invite_create(campaign=other, label="Elsewhere", created_by=owner)
    for invite_id in (elsewhere.pk, elsewhere.pk + 1000):
        response = client.post(reverse("invite_revoke", args=[campaign.pk, invite_id]))
        assert response.status_code == 404
    elsewhere.refresh_from_db()
    assert not elsewhere.revoked
    page = client.get(reverse("annotation_setup", args=[campaign.pk])).content.decode()
    assert "Invite link withdrawn." not in page


class PastSigner(signing.TimestampSigner):
    """Django's signer, signing as of ``days`` ago (a link's signature says when it was made)."""

    def __init__(self, *, days: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.then = time.time() - days * 24 * 3600

    def timestamp(self) -> str:
        return signing.b62_encode(int(self.then))


def token_signed_ago(invite: Invite, days: int) -> str:
    signer = PastSigner(days=days, salt=INVITE_SALT)
    return signer.sign_object({"invite": invite.pk}, compress=True)


@pytest.mark.parametrize(("days", "status"), [(10, 302), (400, 410)])
def test_a_link_made_longer_ago_than_a_year_is_refused_even_if_its_invite_is_valid(
    client, invite, days, status
) -> None:  # type: ignore[no-untyped-def]
    Invite.objects.filter(pk=invite.pk).update(expires_at=timezone.now() + timedelta(days=30))
    response = client.post(reverse("invite", args=[token_signed_ago(invite, days)]))
    assert response.status_code == status
    if status == 410:
        assert "This invite link has expired" in response.content.decode()
        assert "_auth_user_id" not in client.session


def test_an_invite_valid_for_no_time_has_expired_when_it_is_opened(client, campaign, owner) -> None:  # type: ignore[no-untyped-def]
    invite = invite_create(campaign=campaign, label="Late", created_by=owner, days=0)
    response = client.post(url(invite))
    assert response.status_code == 410
    assert "This invite link has expired" in response.content.decode()
    assert not campaign.annotators.filter(username__startswith="late-").exists()


def test_a_link_signed_for_another_purpose_or_with_another_key_is_refused(client, invite) -> None:  # type: ignore[no-untyped-def]
    other_salt = signing.dumps({"invite": invite.pk}, salt="evalsite.something-else")
    other_key = signing.dumps({"invite": invite.pk}, key="not-our-secret-key", salt=INVITE_SALT)
    for token in (other_salt, other_key):
        response = client.post(reverse("invite", args=[token]))
        assert response.status_code == 410
        assert "This invite link is not valid." in response.content.decode()
    invite.refresh_from_db()
    assert invite.user is None


def test_a_link_of_another_campaign_admits_to_that_campaign_only(
    client, campaign, other_organizer
) -> None:  # type: ignore[no-untyped-def]
    other = make_campaign(owner=other_organizer, name="Another campaign")
    other_invite = invite_create(campaign=other, label="Crowd", created_by=other_organizer)
    page = client.get(url(other_invite)).content.decode()
    assert "Another campaign" in page
    assert campaign.name not in page
    client.post(url(other_invite))
    user = client.get(reverse("my_tasks")).context["user"]
    assert other.annotators.filter(pk=user.pk).exists()
    assert not campaign.annotators.filter(pk=user.pk).exists()


def test_the_setup_page_says_when_it_lists_only_the_newest_links(campaign, owner) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    client.login(username=owner.username, password=PASSWORD)
    setup = reverse("annotation_setup", args=[campaign.pk])
    for _ in range(INVITES_SHOWN):
        invite_create(campaign=campaign, label="Crowd", created_by=owner)
    page = client.get(setup).content.decode()
    assert page.count("data-invite-url") == INVITES_SHOWN
    assert 'id="invites-shown"' not in page
    invite_create(campaign=campaign, label="Latest", created_by=owner)
    page = client.get(setup).content.decode()
    assert page.count("data-invite-url") == INVITES_SHOWN
    assert f"Showing the newest {INVITES_SHOWN} of {INVITES_SHOWN + 1} invite links." in page
    assert "Latest" in page
