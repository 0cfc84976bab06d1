"""Invite links: signed tokens for a protocol config, and the accounts they create or log in."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core import signing
from django.db import transaction
from django.utils import timezone
from django.utils.crypto import get_random_string
from django.utils.text import slugify
from django.utils.translation import gettext as _

from annotation.models import (
    Campaign,
    Invite,
)
from annotation.permissions import user_has_organizer_rights

INVITE_SALT = "evalsite.invite"

# A link's signature carries when it was made (the setup page makes it). However long its invite
# is valid in the database (at most a year through the page), a link older than this is refused:
# an expiry changed by hand in the admin does not revive a leaked link of long ago.
INVITE_TOKEN_MAX_AGE = timedelta(days=366)


def invite_create(*, campaign: Campaign, label: str, created_by: User, days: int = 30) -> Invite:
    return Invite.objects.create(
        campaign=campaign,
        label=label,
        created_by=created_by,
        expires_at=timezone.now() + timedelta(days=days),
    )


def invite_token(*, invite: Invite) -> str:
    """The signed token of an invite link (its validity is checked on use)."""
    return signing.dumps({"invite": invite.pk}, salt=INVITE_SALT, compress=True)


class InviteError(Exception):
    pass


def invite_from_token(*, token: str) -> Invite:
    """The invite a token names, if the signature is valid and the invite usable."""
    try:
        data = signing.loads(token, salt=INVITE_SALT, max_age=INVITE_TOKEN_MAX_AGE)
    except signing.SignatureExpired:
        raise InviteError(
            _("This invite link has expired; ask the organizer for a new one.")
        ) from None
    except signing.BadSignature:
        raise InviteError(_("This invite link is not valid.")) from None
    invite = (
        Invite.objects.select_related("campaign", "user", "crowd")
        .filter(pk=data.get("invite"))
        .first()
    )
    if invite is None:
        raise InviteError(_("This invite link has been withdrawn."))
    invite_check(invite=invite)
    return invite


def invite_check(*, invite: Invite) -> None:
    """Refuse (``InviteError``) an invite that has been withdrawn or has expired."""
    if invite.revoked:
        raise InviteError(_("This invite link has been withdrawn."))
    if invite.expires_at < timezone.now():
        raise InviteError(_("This invite link has expired; ask the organizer for a new one."))


def invite_login_allowed(*, user: User) -> bool:
    """Whether an invite link may log someone in as ``user``: only an annotator account that a
    link created itself (no usable password, no staff rights, organizes nothing). Anything else
    would let whoever holds the link become that person."""
    if user.has_usable_password() or not user.is_active:
        return False
    return not user_has_organizer_rights(user)


def invite_accept(*, invite: Invite, current_user: User | None) -> User:
    """Make someone an annotator of the invite's campaign and return the account to use.

    A logged-in user stays themselves: they join the campaign, the use is recorded, but the link
    is not bound to them (it never becomes a way to log in as them). Without a login, the link
    logs in the annotator account it created on its first anonymous use, creating it now if
    needed. ``invite.user`` is only ever that account.
    """
    users = get_user_model()
    with transaction.atomic():
        invite = (
            Invite.objects.select_for_update(of=("self",)).select_related("user").get(pk=invite.pk)
        )
        if invite.used_at is None:
            invite.used_at = timezone.now()
            invite.save(update_fields=["used_at"])
        if current_user is not None and current_user.is_authenticated:
            user = current_user
        elif invite.user is not None:
            if not invite_login_allowed(user=invite.user):
                raise InviteError(
                    _(
                        "This invite link belongs to an account that must log in with its "
                        "password; ask the organizer for a new link."
                    )
                )
            user = invite.user
        else:
            base = slugify(invite.label)[:40] or "annotator"
            user = users.objects.create_user(username=f"{base}-{get_random_string(6).lower()}")
            user.set_unusable_password()
            user.save(update_fields=["password"])
            invite.user = user
            invite.save(update_fields=["user"])
        invite.campaign.annotators.add(user)
    return user
