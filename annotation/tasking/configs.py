"""Adding a protocol config to a campaign: the one way the setup page and the API share."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from annotation.campaigns.forms import ProtocolConfigForm
from annotation.models import Campaign, ProtocolConfig


def protocol_config_add(*, form: ProtocolConfigForm, campaign: Campaign) -> ProtocolConfig | None:
    """The protocol of a valid ``form``, saved; None, with the error on the form, when the
    campaign already has one of that name."""
    try:
        # The unique constraint decides: a check before the insert would let a second
        # organizer adding the same name at the same moment through to an IntegrityError.
        with transaction.atomic():
            return form.save()
    except IntegrityError:
        if not ProtocolConfig.objects.filter(
            campaign=campaign, name=form.cleaned_data["name"]
        ).exists():
            raise
        form.add_error("name", _("This campaign already has a protocol of that name."))
        return None
