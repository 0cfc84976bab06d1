"""Reads of crowd links and workers: a campaign's links with their study URLs, its workers
with their completions, and the verification of a code a worker sent in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import F, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone

from annotation.crowd.qc import CrowdQC
from annotation.crowd.services import crowd_code_matches
from annotation.models import Campaign, CrowdLink, CrowdPlatform, CrowdWorker

# What each platform puts in place of its placeholders when it sends a worker to the study URL
# (Prolific's "URL parameters" option adds exactly these three).
PROLIFIC_QUERY = (
    "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
)


def crowd_study_url(*, request: HttpRequest, link: CrowdLink) -> str:
    """The URL to give the platform: the link's study page with the worker id parameter (and,
    for Prolific, its placeholders; elsewhere the platform or the HIT's page fills it in). It
    is the same on every call: the token is stored with the link, not signed anew."""
    base = request.build_absolute_uri(reverse("crowd_study", args=[link.study_token]))
    if link.platform == CrowdPlatform.PROLIFIC and link.id_parameter == "PROLIFIC_PID":
        return f"{base}?{PROLIFIC_QUERY}"
    return f"{base}?{link.id_parameter}="


def crowd_links(*, request: HttpRequest, campaign: Campaign) -> list[dict[str, Any]]:
    """The campaign's crowd links, newest first, with their study URLs and worker counts."""
    now = timezone.now()
    links = (
        CrowdLink.objects.filter(invite__campaign=campaign)
        .select_related("invite", "config")
        .order_by("-invite__created")
    )
    return [
        {
            "link": link,
            "url": crowd_study_url(request=request, link=link),
            "usable": not link.invite.revoked and link.invite.expires_at > now,
        }
        for link in links
    ]


def crowd_workers(*, campaign: Campaign, worker_id: str | None = None) -> QuerySet[CrowdWorker]:
    """The campaign's crowd workers (only those of ``worker_id``, on any platform), the last
    to finish first, then those still at work."""
    workers = CrowdWorker.objects.filter(campaign=campaign).select_related("user", "assignment")
    if worker_id is not None:
        workers = workers.filter(worker_id=worker_id.strip())
    return workers.order_by(F("completed_at").desc(nulls_last=True), "-created")


@dataclass(frozen=True)
class Verification:
    """One worker's completion as the verify box and the API show it: whether they finished,
    their code, pass or fail, the QC figures, and whether a code sent in is theirs."""

    worker: CrowdWorker
    qc: CrowdQC | None
    code_matches: bool | None  # None: no code was given

    def to_json(self) -> dict[str, Any]:
        worker = self.worker
        return {
            "worker_id": worker.worker_id,
            "platform": worker.platform,
            "username": worker.user.get_username(),
            "started": worker.created,
            "finished": worker.completed_at is not None,
            "completed_at": worker.completed_at,
            "code": worker.code or None,
            "passed": worker.passed,
            "code_matches": self.code_matches,
            "qc": None if self.qc is None else self.qc.to_json(),
        }


def crowd_verify(
    *,
    campaign: Campaign,
    worker_id: str | None = None,
    code: str = "",
    offset: int = 0,
    limit: int | None = None,
) -> list[Verification]:
    """The campaign's workers (of ``worker_id`` if given), in ``crowd_workers``' order from
    ``offset`` on (at most ``limit`` of them), each with whether ``code`` (if given) is the
    code they were shown."""
    workers = crowd_workers(campaign=campaign, worker_id=worker_id)
    return [
        Verification(
            worker=worker,
            qc=CrowdQC.from_json(worker.qc),
            code_matches=crowd_code_matches(worker=worker, code=code) if code.strip() else None,
        )
        for worker in workers[offset : None if limit is None else offset + limit]
    ]
