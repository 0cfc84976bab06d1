"""A campaign's roster: the users who may pull its tasks, and what they hold.

A user comes to see a campaign as an annotator in one of three ways: an invite link
(``tasking.invites``), an organizer adding their username here, or an organizer pushing a task
to them (``services.task_assign``). Removing a user from the roster returns the tasks they hold
to the pool (their answers so far stay, as with any released task); they no longer see the
campaign. Closing a campaign whose tasks are held is confirmed first
(``campaigns.selectors.campaign_open_holds``),
and the holders see on My tasks that the campaign closed with their task unfinished.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, Q

from annotation.models import Assignment, Campaign, Judgment
from annotation.tasking.services import assignment_release

# Usernames in a pasted list: separated by commas, semicolons, spaces or line breaks.
_SEPARATORS = re.compile(r"[\s,;]+")


def usernames_parse(text: str) -> list[str]:
    """The usernames of a pasted list, in order, each once."""
    return list(dict.fromkeys(name for name in _SEPARATORS.split(text) if name))


@dataclass(frozen=True)
class RosterChange:
    """What adding a list of usernames did."""

    added: list[str]
    already: list[str]  # annotators of the campaign before
    unknown: list[str]  # no such user (an invite link makes an account)


def campaign_annotators_add(*, campaign: Campaign, usernames: list[str]) -> RosterChange:
    """Make the existing users named in ``usernames`` annotators of ``campaign``."""
    user_model = get_user_model()
    field = user_model.USERNAME_FIELD
    found = {
        getattr(user, field): user
        for user in user_model.objects.filter(**{f"{field}__in": usernames})
    }
    current = set(
        campaign.annotators.filter(pk__in=[u.pk for u in found.values()]).values_list(
            "pk", flat=True
        )
    )
    added = [name for name in usernames if name in found and found[name].pk not in current]
    campaign.annotators.add(*(found[name] for name in added))
    return RosterChange(
        added=added,
        already=[name for name in usernames if name in found and found[name].pk in current],
        unknown=[name for name in usernames if name not in found],
    )


def campaign_annotator_remove(*, campaign: Campaign, annotator: User) -> int:
    """Take ``annotator`` off the roster; the tasks they held return to the pool (their
    answers stay). The number of tasks returned."""
    with transaction.atomic():
        campaign.annotators.remove(annotator)
        held = list(
            Assignment.objects.filter(
                task__config__campaign=campaign,
                annotator=annotator,
                status=Assignment.Status.ACTIVE,
            )
        )
        for assignment in held:
            assignment_release(assignment=assignment)
    return len(held)


@dataclass(frozen=True)
class RosterEntry:
    """One annotator of a campaign, with what they hold and have done."""

    user_id: int
    username: str
    held: int  # tasks in progress
    done: int  # tasks finished
    judgments: int


def campaign_roster(*, campaign: Campaign, user_id: int | None = None) -> list[RosterEntry]:
    """The campaign's annotators by username (only the one of ``user_id`` if given), each with
    their tasks and judgments in it (two aggregate queries)."""
    in_campaign = Q(assignments__task__config__campaign=campaign)
    members = campaign.annotators.all()
    judged = Judgment.objects.filter(item__task__config__campaign=campaign)
    if user_id is not None:
        members = members.filter(pk=user_id)
        judged = judged.filter(annotator_id=user_id)
    users = members.annotate(
        held=Count(
            "assignments",
            filter=in_campaign & Q(assignments__status=Assignment.Status.ACTIVE),
        ),
        done=Count(
            "assignments", filter=in_campaign & Q(assignments__status=Assignment.Status.DONE)
        ),
    ).order_by(get_user_model().USERNAME_FIELD)
    judgments = dict(judged.values_list("annotator_id").annotate(n=Count("pk")).order_by())
    return [
        RosterEntry(
            user_id=user.pk,
            username=user.get_username(),
            held=user.held,
            done=user.done,
            judgments=judgments.get(user.pk, 0),
        )
        for user in users
    ]
