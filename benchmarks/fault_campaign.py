"""The campaign the fault scripts (``benchmarks/faults.py``) work on, the annotators' HTTP
client, and the checks that nothing they were told was stored got lost or stored twice, with the
verdict. The services they run on are in ``benchmarks/fault_stack.py``."""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from benchmarks.fault_stack import api, django_connection_reset, emit


@dataclass
class Campaign:
    id: str
    config_id: int
    owner_token: str
    annotator_tokens: list[str]


def campaign_create(
    *,
    annotators: int,
    items_per_task: int = 20,
    annotations_per_task: int = 10,
    with_data: bool = True,
) -> Campaign:
    """The demo's data (60 segments, 4 systems × 3 runs) as an organizer's campaign with a
    direct-assessment protocol (15 tasks of 20 items, each for ``annotations_per_task``
    annotators), and ``annotators`` annotators with API tokens."""
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from annotation.campaigns.services import campaign_create as create
    from annotation.campaigns.services import campaign_data_import, user_make_organizer
    from annotation.demo.campaign import demo_files
    from annotation.models import ProtocolConfig
    from annotation.tasking.build import tasks_build

    users = get_user_model().objects
    owner = users.create_user(username="organizer", password=uuid.uuid4().hex)
    user_make_organizer(user=owner)
    campaign = create(
        owner=owner,
        organizers=[],
        name="Faults de-en",
        source_language="de",
        target_language="en",
        status="active",
    )
    tokens: list[str] = []
    if not with_data:
        return Campaign(str(campaign.pk), 0, Token.objects.create(user=owner).key, tokens)
    campaign_data_import(campaign=campaign, files=demo_files(), user=owner)
    config = ProtocolConfig.objects.create(
        campaign=campaign,
        name="DA",
        protocol="direct_assessment",
        mode="source",
        items_per_task=items_per_task,
        annotations_per_task=annotations_per_task,
        outputs_per_screen=1,
    )
    tasks_build(config=config)
    for n in range(annotators):
        user = users.create_user(username=f"annotator{n:03d}", password=uuid.uuid4().hex)
        campaign.annotators.add(user)
        tokens.append(Token.objects.create(user=user).key)
    return Campaign(
        id=str(campaign.pk),
        config_id=config.pk,
        owner_token=Token.objects.create(user=owner).key,
        annotator_tokens=tokens,
    )


def metric_settings_small(campaign_id: str, *, resamples: int = 100, **fields: Any) -> None:
    """A few metrics and trials, and few resamples (the campaign's one count)."""
    from annotation.models import Campaign
    from metrics.pipeline import metric_settings

    ms = metric_settings(campaign_id)
    values = {"metrics": ["bleu", "chrf"], "ar_trials": 200, **fields}
    for name, value in values.items():
        setattr(ms, name, value)
    ms.save()
    campaign = Campaign.objects.get(pk=campaign_id)
    Campaign.objects.filter(pk=campaign_id).update(
        analysis_settings={**campaign.analysis_settings, "resamples": resamples}
    )


@dataclass
class Submit:
    """One submit as the client saw it: acknowledged (201/200) or not, after how many tries."""

    item: int
    submission_id: str
    status: int = 0
    tries: int = 0


@dataclass
class Response:
    """One HTTP answer the client got: when (monotonic), how long it took, its status, and
    whether an error said clearly what happened (503 with a ``detail``)."""

    at: float
    seconds: float
    status: int
    clear: bool


# Statuses after which the same request is worth sending again: the service is unavailable
# (503) or no HTTP answer came at all (0).
RETRYABLE = (0, 502, 503, 504)


@dataclass
class Annotator:
    """An annotator client: takes a task, answers its current item, and resends a failed submit
    with the same submission id (so a submit that was stored but not acknowledged is stored
    once) until it is acknowledged or ``retry_for`` seconds have passed."""

    base: str
    token: str
    config_id: int
    assignment: str | None = None
    submits: list[Submit] = field(default_factory=list)
    responses: list[Response] = field(default_factory=list)
    finished: bool = False
    error: str | None = None  # the first clear error received, to show

    def _call(self, path: str, method: str = "GET", body: Any = None) -> tuple[int, Any]:
        started = time.monotonic()
        status, reply = api(self.base, path, self.token, method, body)
        clear = status == 503 and isinstance(reply, dict) and bool(reply.get("detail"))
        self.responses.append(Response(started, time.monotonic() - started, status, clear))
        if clear and self.error is None:
            self.error = f"{status} {json.dumps(reply)}"
        return status, reply

    def step(self, *, retry_for: float = 120, retry_wait: float = 0.25) -> bool:
        """Answer one item; False when the server failed (try again later). Sets ``finished``
        when no task is left."""
        if self.assignment is None:
            status, body = self._call(f"/api/protocols/{self.config_id}/take/", "POST")
            if status == 204:
                self.finished = True
                return False
            if status != 200:
                return False
            self.assignment = body["id"]
        status, screen = self._call(f"/api/assignments/{self.assignment}/current/")
        if status in (404, 409, 410):  # finished, expired or gone: take the next task
            self.assignment = None
            return True
        if status != 200:
            return False
        answer = {
            str(o["id"]): {c["key"]: (c["min"] + c["max"]) // 2 for c in screen["criteria"]}
            for o in screen["outputs"]
        }
        submit = Submit(item=screen["item"], submission_id=str(uuid.uuid4()))
        body = {
            "item": submit.item,
            "revision": screen["revision"],
            "submission_id": submit.submission_id,
            "answer": answer,
        }
        self.submits.append(submit)
        deadline = time.monotonic() + retry_for
        while True:
            submit.tries += 1
            status, reply = self._call(f"/api/assignments/{self.assignment}/submit/", "POST", body)
            submit.status = status
            if status in (200, 201):
                if reply.get("finished"):
                    self.assignment = None
                return True
            if status not in RETRYABLE or time.monotonic() > deadline:
                return False
            time.sleep(retry_wait)

    @property
    def acknowledged(self) -> list[Submit]:
        return [s for s in self.submits if s.status in (200, 201)]


def annotators_run(
    clients: list[Annotator], stop: threading.Event, *, think: float = 0.1
) -> list[threading.Thread]:
    """One thread per client, answering items until ``stop`` is set or no task is left."""

    def work(client: Annotator) -> None:
        while not stop.is_set() and not client.finished:
            if not client.step():
                time.sleep(0.25)  # the server failed: try again a little later
            time.sleep(think)

    threads = [threading.Thread(target=work, args=(c,), daemon=True) for c in clients]
    for thread in threads:
        thread.start()
    return threads


def acknowledged_wait(clients: list[Annotator], count: int, timeout: float = 120) -> None:
    """Wait until the clients have ``count`` acknowledged submits between them."""
    deadline = time.monotonic() + timeout
    while sum(len(c.acknowledged) for c in clients) < count:
        if time.monotonic() > deadline or all(c.finished for c in clients):
            raise SystemExit(f"fewer than {count} submits acknowledged within {timeout:.0f} s")
        time.sleep(0.1)


def responses_summary(clients: list[Annotator], since: float, until: float) -> dict[str, Any]:
    """What the clients got between two moments: answers by status, the unclear errors (not a
    503 with a message: a 500, no answer) and the slowest answer."""
    window = [r for c in clients for r in c.responses if since <= r.at <= until]
    by_status: dict[int, int] = {}
    for r in window:
        by_status[r.status] = by_status.get(r.status, 0) + 1
    unclear = [r for r in window if (r.status >= 500 and not r.clear) or r.status == 0]
    return {
        "answers": len(window),
        "by_status": dict(sorted(by_status.items())),
        "unclear": len(unclear),
        "slowest": max((r.seconds for r in window), default=0.0),
    }


def judgments_check(annotators: list[Annotator]) -> list[str]:
    """Losses and duplicates: every acknowledged submit stored exactly once (by its submission
    id), at most one judgment per (annotator, item). The problems found, in words."""
    from django.db.models import Count

    from annotation.models import Judgment, JudgmentRevision

    django_connection_reset()
    problems = []
    # The judgment holds the latest accepted submit, its revisions the earlier ones.
    stored = set(Judgment.objects.values_list("submission_id", flat=True))
    stored |= set(JudgmentRevision.objects.values_list("submission_id", flat=True))
    for client in annotators:
        for submit in client.acknowledged:
            if uuid.UUID(submit.submission_id) not in stored:
                problems.append(f"LOST: submit {submit.submission_id} (item {submit.item})")
    duplicates = (
        Judgment.objects.values("annotator_id", "item_id")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )
    if duplicates:
        problems.append(f"DUPLICATES: {duplicates} (annotator, item) pairs with several judgments")
    return problems


def fail(problems: list[str], passed: str = "nothing lost, no duplicates") -> int:
    """Print the problems found and the verdict; the exit status."""
    for problem in problems:
        emit(f"PROBLEM: {problem}")
    emit("RESULT: " + ("FAILED" if problems else f"passed: {passed}"))
    return 1 if problems else 0
