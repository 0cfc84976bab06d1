"""The accounts of an import's annotators: one per annotator id of the file, without a usable
password (``imp-<first 8 hex of the campaign>-<annotator id>``)."""

from __future__ import annotations

import hashlib
import re

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User

from annotation.campaigns.uploads import UploadError, UploadProblem
from annotation.judgment_import.rows import ParsedJudgments
from annotation.models import Campaign

BATCH = 2000
USERNAME_PREFIX = "imp"


def _username(campaign: Campaign, annotator: str) -> str:
    """``imp-<first 8 hex of the campaign>-<annotator id>``; characters that usernames may not
    hold become ``_`` and a short hash keeps such ids apart."""
    clean = re.sub(r"[^\w.@+-]", "_", annotator)[:100]
    if clean != annotator:
        clean += "-" + hashlib.sha1(annotator.encode()).hexdigest()[:8]
    return f"{USERNAME_PREFIX}-{campaign.pk.hex[:8]}-{clean}"


def annotator_accounts(
    campaign: Campaign, parsed: ParsedJudgments, annotators: list[str]
) -> dict[str, User]:
    """One account per annotator id of the file; an earlier import's account is reused."""
    user_model = get_user_model()
    wanted = {a: _username(campaign, a) for a in annotators}
    existing = {
        u.get_username(): u for u in user_model.objects.filter(username__in=wanted.values())
    }
    clashes = [name for name, u in existing.items() if u.has_usable_password()]
    if clashes:
        raise UploadError(
            [
                UploadProblem(
                    parsed.file,
                    None,
                    f"the username {clashes[0]} belongs to an account that can log in; rename "
                    "that account or the annotator in the file",
                )
            ]
        )
    new = []
    for name in wanted.values():
        if name not in existing:
            account = user_model(username=name)
            account.set_unusable_password()
            new.append(account)
    user_model.objects.bulk_create(new, batch_size=BATCH)
    by_name = {u.get_username(): u for u in user_model.objects.filter(username__in=wanted.values())}
    return {a: by_name[name] for a, name in wanted.items()}
