"""Ranking: the shown translations ranked from best (1) to worst, ties allowed."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from annotation.protocols.base import BILINGUAL, MONOLINGUAL, RANK, Protocol

RANKING = "ranking"

PROTOCOL = Protocol(
    RANKING,
    _("Ranking"),
    (RANK,),
    (BILINGUAL, MONOLINGUAL),
    ranks=True,
    max_outputs=9,
    instructions=_(
        "Rank the translations from best (1) to worst. Give two translations the same rank "
        "when they are equally good."
    ),
)
