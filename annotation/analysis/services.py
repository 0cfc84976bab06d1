"""Services (writes) of the human-judgment analysis: organizer decisions and pseudonyms."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Max

from annotation.analysis.settings import AnalysisSettings
from annotation.models import AnnotatorDecision, AnnotatorPseudonym, Campaign, Judgment
from annotation.signals import campaign_data_changed


def campaign_analysis_settings_save(*, campaign: Campaign, settings: AnalysisSettings) -> bool:
    """Make ``settings`` the campaign's analysis setting; whether it changed. A change
    schedules the recomputation of the campaign's stored results, as new judgments do."""
    data = settings.as_dict()
    if data == AnalysisSettings.from_dict(campaign.analysis_settings or {}).as_dict():
        return False
    with transaction.atomic():
        campaign.analysis_settings = data
        campaign.save(update_fields=["analysis_settings", "updated"])
        campaign_data_changed.send(sender=Campaign, campaign_id=campaign.pk)
    return True


def annotator_decision_record(
    *,
    campaign: Campaign,
    annotator: User,
    included: bool,
    reason: str,
    decided_by: User | None,
) -> AnnotatorDecision:
    """Include or exclude an annotator's judgments from the campaign's aggregates, overriding
    the QC verdict; a later decision replaces an earlier one. ``reason`` must not be empty."""
    reason = reason.strip()
    if not reason:
        raise ValueError("a decision needs a reason")
    decision, _ = AnnotatorDecision.objects.update_or_create(
        campaign=campaign,
        annotator=annotator,
        defaults={"included": included, "reason": reason, "decided_by": decided_by},
    )
    # The campaign's results include or leave out this annotator now: recompute them, as after
    # new judgments (the decisions are part of the results' fingerprint).
    campaign_data_changed.send(sender=AnnotatorDecision, campaign_id=campaign.pk)
    return decision


def annotator_decision_clear(*, campaign: Campaign, annotator: User) -> None:
    """Remove the organizer's decision: the QC verdict applies again."""
    deleted, _ = AnnotatorDecision.objects.filter(campaign=campaign, annotator=annotator).delete()
    if deleted:
        campaign_data_changed.send(sender=AnnotatorDecision, campaign_id=campaign.pk)


def annotator_pseudonyms_ensure(
    *, campaign: Campaign, judged: Iterable[int] | None = None
) -> dict[int, int]:
    """Give every annotator with judgments in ``campaign`` a pseudonymous number (A001, …);
    with ``judged``, every annotator of those user ids (a caller that has just read their
    judgments, which saves the query for them).

    Numbers never change: annotators who judge for the first time get the next numbers, in the
    order of their user ids. Returns ``{user id: number}`` for the whole campaign.
    """
    if judged is None:
        # Without the model's ordering: it would join the assignment and the item and make the
        # DISTINCT run over their columns too, reading every judgment (8 s for a million).
        judged = (
            Judgment.objects.filter(item__task__config__campaign=campaign)
            .order_by()
            .values_list("annotator_id", flat=True)
            .distinct()
        )
    ids = set(judged)
    known = dict(
        AnnotatorPseudonym.objects.filter(campaign=campaign).values_list("annotator_id", "number")
    )
    if ids <= set(known):
        return known
    with transaction.atomic():
        # Concurrent report downloads number new annotators one at a time.
        Campaign.objects.select_for_update().filter(pk=campaign.pk).first()
        known = dict(
            AnnotatorPseudonym.objects.filter(campaign=campaign).values_list(
                "annotator_id", "number"
            )
        )
        start = (
            AnnotatorPseudonym.objects.filter(campaign=campaign).aggregate(n=Max("number"))["n"]
            or 0
        )
        new = sorted(ids - set(known))
        AnnotatorPseudonym.objects.bulk_create(
            [
                AnnotatorPseudonym(campaign=campaign, annotator_id=user_id, number=start + i)
                for i, user_id in enumerate(new, start=1)
            ]
        )
        known.update({user_id: start + i for i, user_id in enumerate(new, start=1)})
    return known
