"""What a protocol's QC can tell apart, for the pages that list protocols:
``{% load qc_power %}`` then ``{% config_qc_power campaign config as q %}`` and
``{% include "annotation/_qc_power.html" %}`` (:mod:`annotation.analysis.qc_power`). A tag,
because the setup page's view belongs to task building, which the analysis builds on."""

from __future__ import annotations

from django import template

from annotation.analysis.qc_power import ConfigQCPower, campaign_qc_power
from annotation.models import Campaign, ProtocolConfig

register = template.Library()


@register.simple_tag
def config_qc_power(campaign: Campaign, config: ProtocolConfig) -> ConfigQCPower | None:
    """The QC figures and warnings of ``config``, one of ``campaign``'s (None: none to show)."""
    return campaign_qc_power(campaign=campaign, config=config)
