"""The permission matrix: every site URL pattern, the roles, the expected outcome of each, and a
seeded campaign to try them on."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.forms import model_to_dict
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.urls.resolvers import RoutePattern

from annotation.campaigns.forms import ProtocolConfigForm
from annotation.crowd.services import crowd_link_create
from annotation.models import (
    Assignment,
    Campaign,
    CrowdLink,
    Invite,
    Item,
    JudgmentImportJob,
    ProtocolConfig,
    TutorialItem,
)
from annotation.protocols import PROTOCOLS
from annotation.tasking.invites import invite_create, invite_token
from annotation.tasking.services import task_assign_next
from tests.dashboard_factories import analysis_run_sync
from tests.factories import PASSWORD, full_answer, lines, make_campaign, make_config, make_user
from tests.support.google_mqm_release import tsv

ROLES = ("anonymous", "other_annotator", "staff", "other_organizer", "annotator", "owner")


STATE_CHANGING = ("POST", "PUT", "PATCH", "DELETE")


LOGIN = "login"  # a redirect to the login page


@dataclass(frozen=True)
class Pattern:
    route: str
    name: str | None
    params: tuple[str, ...]


def url_patterns(
    patterns: list[Any] | None = None, prefix: str = "", params: tuple[str, ...] = ()
) -> Iterator[Pattern]:
    """Every URL pattern of the project, with included ones flattened."""
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        route = prefix + str(entry.pattern)
        found = params + _params(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from url_patterns(entry.url_patterns, route, found)
        elif isinstance(entry, URLPattern):
            yield Pattern(route, entry.name, found)


def is_admin(pattern: Pattern) -> bool:
    return pattern.route.startswith("admin/")


def _params(pattern: Any) -> tuple[str, ...]:
    if isinstance(pattern, RoutePattern):
        return tuple(pattern.converters)
    return tuple(pattern.regex.groupindex)  # a regular expression (DRF's router)


SITE_PATTERNS = [p for p in url_patterns() if not is_admin(p)]


METHODS = ("GET", *STATE_CHANGING)


Expected = int | str


Rule = Callable[[str, str], Expected]


GET = {"GET": 200}


NON_ORGANIZERS = {"annotator", "other_annotator", "staff"}


def organizer_page(ok: dict[str, Expected], *, campaign: bool = True) -> Rule:
    """An organizer page (of one campaign, unless ``campaign`` is false)."""

    def rule(role: str, method: str) -> Expected:
        if role == "anonymous":
            return LOGIN
        if role in NON_ORGANIZERS:
            return 403
        if method not in ok:
            return 405
        return 404 if role == "other_organizer" and campaign else ok[method]

    return rule


def organizer_api(ok: dict[str, Expected], *, campaign: bool = True) -> Rule:
    """An organizer endpoint of the API (DRF checks roles before methods)."""

    def rule(role: str, method: str) -> Expected:
        if role == "anonymous":
            return 401
        if role in NON_ORGANIZERS:
            return 403
        if method not in ok:
            return 405
        return 404 if role == "other_organizer" and campaign else ok[method]

    return rule


def annotator_only(ok: dict[str, Expected], *, api: bool) -> Rule:
    """A task or protocol of the campaign's annotator: to anyone else it does not exist."""

    def rule(role: str, method: str) -> Expected:
        if role == "anonymous":
            return 401 if api else LOGIN
        if method not in ok:
            return 405
        return ok[method] if role == "annotator" else 404

    return rule


def logged_in(ok: dict[str, Expected], *, api: bool = False) -> Rule:
    def rule(role: str, method: str) -> Expected:
        if role == "anonymous":
            return 401 if api else LOGIN
        return ok.get(method, 405)

    return rule


def public(ok: dict[str, Expected]) -> Rule:
    def rule(role: str, method: str) -> Expected:
        return ok.get(method, 405)

    return rule


MATRIX: dict[str, Rule] = {
    # Project pages
    "home": logged_in({"GET": 302}),
    "healthz": public(GET),
    "login": public({"GET": 200, "POST": 302}),
    "logout": public({"POST": LOGIN}),
    # Django's: every method redirects (to ``next``); only POST changes the language.
    "set_language": public(dict.fromkeys(METHODS, 302)),
    "api_schema": public(GET),
    "api_docs": public(GET),
    "api-root": logged_in(GET, api=True),
    # Organizer pages
    "campaign_list": organizer_page(GET, campaign=False),
    "campaign_create": organizer_page({"GET": 200, "POST": 302}, campaign=False),
    "campaign_from_release": organizer_page({"GET": 200, "POST": 302}, campaign=False),
    "campaign_detail": organizer_page(GET),
    "campaign_edit": organizer_page({"GET": 200, "POST": 302}),
    "campaign_upload": organizer_page({"GET": 200, "POST": 302}),
    "annotation_setup": organizer_page({"GET": 200, "POST": 302}),
    "config_tasks": organizer_page(GET),
    "config_build": organizer_page({"POST": 302}),
    "config_builds_status": organizer_page(GET),
    "config_assign": organizer_page({"POST": 302}),
    "invites_create": organizer_page({"POST": 302}),
    "invite_revoke": organizer_page({"POST": 302}),
    "roster_add": organizer_page({"POST": 302}),
    # GET asks for confirmation; POST removes.
    "roster_remove": organizer_page({"GET": 200, "POST": 302}),
    "crowd_setup": organizer_page({"GET": 200, "POST": 302}),
    "crowd_link_protocol": organizer_page({"POST": 302}),
    "crowd_roster_offer": organizer_page({"POST": 302}),
    "config_tutorial": organizer_page({"GET": 200, "POST": 302}),
    "tutorial_item_delete": organizer_page({"POST": 302}),
    "api-config-tutorial": organizer_api({"GET": 200, "POST": 201, "PUT": 200}),
    "api-campaign-completions": organizer_api(GET),
    "api-config-allocation": organizer_api(GET),
    "api-campaign-builds": organizer_api(GET),
    "api-campaign-protocols": organizer_api({"GET": 200, "POST": 201}),
    "api-campaign-crowd-links": organizer_api({"GET": 200, "POST": 201}),
    "api-campaign-annotators": organizer_api({"GET": 200, "POST": 200}),
    "api-campaign-annotator": organizer_api({"DELETE": 200}),
    "campaign_analysis": organizer_page(GET),
    "campaign_analysis_decision": organizer_page({"POST": 302}),
    "campaign_analysis_settings": organizer_page({"POST": 302}),
    "campaign_analysis_explore": organizer_page(GET),
    "campaign_judgment_import": organizer_page({"GET": 200, "POST": 400}),
    "campaign_judgment_import_job": organizer_page(GET),
    "campaign_report_judgments": organizer_page(GET),
    "campaign_report_systems": organizer_page(GET),
    "campaign_report_annotators": organizer_page(GET),
    "campaign_report_spans": organizer_page(GET),
    "analysis_settings": organizer_page({"GET": 200, "POST": 302}),
    "campaign_dashboard": organizer_page(GET),
    "campaign_dashboard_status": organizer_page(GET),
    "campaign_dashboard_recompute": organizer_page({"POST": 302}),
    "campaign_dashboard_result": organizer_page(GET),
    "campaign_meta_evaluation": organizer_page({"GET": 200, "POST": 400}),
    # Organizer API
    "api-campaign-list": organizer_api({"GET": 200, "POST": 201}, campaign=False),
    "api-campaign-detail": organizer_api({"GET": 200, "PUT": 200, "PATCH": 200}),
    "api-campaign-contents": organizer_api(GET),
    "api-campaign-segments": organizer_api(GET),
    "api-campaign-upload": organizer_api({"POST": 201}),
    "api-campaign-from-release": organizer_api({"POST": 201}, campaign=False),
    "api-analysis": organizer_api({"GET": 200, "POST": 202}),
    "api-segment-scores": organizer_api(GET),
    "api-analysis-result": organizer_api(GET),
    "api-campaign-analysis": organizer_api(GET),
    "api-campaign-analysis-settings": organizer_api({"GET": 200, "PUT": 200}),
    "api-campaign-report-judgments": organizer_api(GET),
    "api-campaign-report-systems": organizer_api(GET),
    "api-campaign-report-annotators": organizer_api(GET),
    "api-campaign-report-spans": organizer_api(GET),
    "api-campaign-error-spans": organizer_api(GET),
    "api-campaign-document-scores": organizer_api(GET),
    # Invalid bodies (no file, no annotator): the role check passed, validation refused.
    "api-campaign-judgment-imports": organizer_api({"POST": 400}),
    "api-campaign-judgment-import-job": organizer_api(GET),
    "api-meta-evaluation": organizer_api({"POST": 400}),
    "api-campaign-annotator-decisions": organizer_api({"POST": 400}),
    # Annotator pages and API
    "my_tasks": logged_in(GET),
    "api-my-tasks": logged_in(GET, api=True),
    "task_take": annotator_only({"POST": 302}, api=False),
    "api-config-take": annotator_only({"POST": 200}, api=True),
    "annotate": annotator_only(GET, api=False),
    "annotate_item": annotator_only(GET, api=False),
    "api-assignment-current": annotator_only(GET, api=True),
    "api-assignment-submit": annotator_only({"POST": 201}, api=True),
    # The seed's task has segment screens: a screen of one item, answered.
    "api-assignment-screen-submit": annotator_only({"POST": 201}, api=True),
    # The seed's protocol has no tutorial: its page goes to the task, its API says so (410),
    # and a tutorial answer finds no item to answer (409).
    "tutorial": annotator_only({"GET": 302}, api=False),
    "api-assignment-tutorial": annotator_only({"GET": 410}, api=True),
    "api-assignment-tutorial-submit": annotator_only({"POST": 409}, api=True),
    # The seeded protocol asks for no document score: the role check passed, the service refused.
    "api-assignment-document-score": annotator_only({"POST": 400}, api=True),
    # The annotator's task is not finished (and they came through no crowd link): back to it.
    "crowd_completion": annotator_only({"GET": 302}, api=False),
    # An invite link is a capability: whoever holds it joins (a logged-in user as themselves).
    "invite": public({"GET": 200, "POST": 302}),
    # A crowd study URL: whoever opens it with a worker id starts as that worker.
    "crowd_study": public({"GET": 200, "POST": 302}),
    "favicon": public({"GET": 302}),
}


# Query strings some views need to answer 200 to the owner.
QUERIES = {"api-segment-scores": "?metric=bleu", "crowd_study": "?PROLIFIC_PID=w1"}


# Valid form bodies that need nothing from the seed.
FORM_BODIES: dict[str, dict[str, Any]] = {
    "invites_create": {"label": "Crowd", "count": 1, "days": 7},
    "roster_add": {"usernames": "annotator"},
    "crowd_roster_offer": {"offer": "on"},
    "crowd_study": {"worker_id": "w1"},
}


@dataclass
class Seed:
    users: dict[str, AbstractBaseUser | None]
    campaign: Campaign
    config: ProtocolConfig
    assignment: Assignment
    invite: Invite
    import_job: JudgmentImportJob
    tutorial_item: TutorialItem
    crowd_link: CrowdLink

    def values(self) -> dict[str, Any]:
        """A value for every path parameter of the project's URLs."""
        return {
            "campaign_id": self.campaign.pk,
            "pk": self.campaign.pk,
            "config_id": self.config.pk,
            "assignment_id": self.assignment.pk,
            "position": 1,
            "invite_id": self.invite.pk,
            "job_id": self.import_job.pk,
            "item_id": self.tutorial_item.pk,
            "user_id": self.assignment.annotator_id,
            "username": self.assignment.annotator.get_username(),
            "token": invite_token(invite=self.invite),
            "link_id": self.crowd_link.pk,
            "study_token": self.crowd_link.study_token,
            "format": "json",
            "fmt": "csv",
            "kind": "metrics",
        }

    def body(self, name: str) -> tuple[dict[str, Any], bool]:
        """A representative valid body for a state-changing request, and whether it is JSON."""
        campaign_fields = {
            "name": "Renamed",
            "source_language": "de",
            "target_language": "en",
            "description": "",
            "status": "active",
        }
        if name == "login":
            return {"username": "owner", "password": PASSWORD}, False
        if name == "set_language":
            return {"language": "en", "next": reverse("my_tasks")}, False
        if name in {"campaign_create", "campaign_edit"}:
            return {**campaign_fields, "co_organizers": ""}, False
        if name in {"api-campaign-list", "api-campaign-detail"}:
            return campaign_fields, True
        if name in {"campaign_from_release", "api-campaign-from-release"}:
            return {"campaign_name": "From a release", "file": release_file()}, False
        if name in {"campaign_upload", "api-campaign-upload"}:
            return {"systems": [extra_system_file()]}, False
        if name == "annotation_setup":
            defaults = model_to_dict(ProtocolConfig(), fields=ProtocolConfigForm._meta.fields)
            fields = {k: v for k, v in defaults.items() if v is not None}
            mode = PROTOCOLS["adequacy_fluency"].modes[0].key
            return {**fields, "name": "Second", "protocol": "adequacy_fluency", "mode": mode}, False
        if name == "config_assign":
            return {"task": 2, "username": "annotator"}, False
        if name in FORM_BODIES:
            return FORM_BODIES[name], False
        if name == "crowd_link_protocol":
            return {"config": self.config.pk}, False
        if name == "api-campaign-crowd-links":
            return {"platform": "prolific", "config": self.config.pk}, True
        if name == "crowd_setup":
            return {
                "platform": "prolific",
                "config": self.config.pk,
                "rule": "not_failed",
                "days": 7,
            }, False
        if name == "config_tutorial":
            return {"action": "rule", "on_fail": "continue", "attempts": 2}, False
        if name == "api-config-tutorial":
            # POST adds these items; PUT reads the rule's fields from the same body.
            item = {"source": "a", "outputs": ["b"], "expectation": {"order": [1, 2]}}
            return {"items": [{**item, "outputs": ["b", "c"]}], "on_fail": "stop"}, True
        if name in {"api-assignment-tutorial-submit"}:
            return {"item": 1, "submission_id": str(uuid.uuid4()), "answer": {}}, True
        if name == "api-campaign-annotators":
            return {"usernames": ["annotator"]}, True
        if name == "api-campaign-protocols":
            return {"name": "From a preset", "preset": "wmt_esa"}, True
        if name == "campaign_analysis_decision":
            return {"annotator": self.assignment.annotator_id, "action": "exclude"}, False
        if name == "analysis_settings":
            return {
                "metrics": ["bleu"],
                "tokenize": "13a",
                "resamples": 100,
                "ar_trials": 100,
                "seed": 1,
            }, False
        if name == "api-assignment-document-score":
            item = Item.objects.get(task=self.assignment.task, position=0)
            return {
                "item": item.pk,
                "revision": 0,
                "submission_id": str(uuid.uuid4()),
                "score": 50,
            }, True
        if name in {"api-assignment-submit", "api-assignment-screen-submit"}:
            return self.answer_body(name), True
        return {}, False

    def answer_body(self, name: str) -> dict[str, Any]:
        """A valid answer to the task's first item: a submit's, or a screen submit's (the
        seed's task has segment screens: a screen of that one item)."""
        item = Item.objects.get(task=self.assignment.task, position=0)
        answer = {
            "item": item.pk,
            "revision": 0,
            "submission_id": str(uuid.uuid4()),
            "answer": full_answer(item),
        }
        if name == "api-assignment-screen-submit":
            return {"screen": item.pk, "items": [answer]}
        return answer


@contextmanager
def seed_rolled_back(django_db_blocker: Any) -> Iterator[Seed]:
    """The seed, in a transaction rolled back at the end. Each test's own transaction nests in
    it (a savepoint), so whatever a test changes is undone after it."""
    with django_db_blocker.unblock(), transaction.atomic():
        yield seed_build()
        transaction.set_rollback(True)


def outcome(response: Any) -> Expected:
    """The status, or LOGIN for a redirect to the login page."""
    location = response.get("Location", "")
    if response.status_code == 302 and location.startswith(reverse("login")):
        return LOGIN
    return int(response.status_code)


def path_for(pattern: Pattern, seed: Seed) -> str:
    values = seed.values()
    assert pattern.name is not None
    return reverse(pattern.name, kwargs={p: values[p] for p in pattern.params}) + QUERIES.get(
        pattern.name, ""
    )


def extra_system_file() -> Any:
    from django.core.files.uploadedfile import SimpleUploadedFile

    text = ["An extra house.", "An extra dog.", "An extra Berlin.", "An extra nine."]
    return SimpleUploadedFile("extra.opt0.txt", lines(text))


def release_file() -> Any:
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("mqm_ted_ende.tsv", tsv().content)


def seed_build() -> Seed:
    """Users in every role, the campaign with texts, a protocol with tasks, the annotator's task,
    an invite link and stored analysis results; another campaign with its own annotator."""
    owner = make_user("owner", organizer=True)
    co_organizer = make_user("coorg", organizer=True)
    annotator = make_user("annotator")
    other_organizer = make_user("outsider", organizer=True)
    other_annotator = make_user("other-annotator")
    staff = make_user("staff", is_staff=True)
    campaign = make_campaign(owner=owner, organizers=[co_organizer], with_data=True)
    campaign.annotators.add(annotator)
    other = make_campaign(owner=other_organizer, name="Other campaign", with_data=True)
    other.annotators.add(other_annotator)
    config = make_config(campaign, "adequacy_fluency", outputs_per_screen=2, items_per_task=2)
    assignment = task_assign_next(config=config, annotator=annotator)
    assert assignment is not None
    invite = invite_create(campaign=campaign, label="Crowd", created_by=owner)
    # Stored results, so the result endpoints have something to show their organizers.
    analysis_run_sync(campaign=campaign, user=owner, metrics=("bleu",), resamples=50)
    users = {
        "anonymous": None,
        "annotator": annotator,
        "other_annotator": other_annotator,
        "owner": owner,
        "other_organizer": other_organizer,
        "staff": staff,
    }
    # An import that ended (refused), for the pages and the API that show one.
    import_job = JudgmentImportJob.objects.create(
        campaign=campaign, file_name="a.tsv", status=JudgmentImportJob.Status.FAILED, error="x"
    )
    # A tutorial item of a second protocol (the first keeps no tutorial: its pages stay open).
    tutorial_config = make_config(campaign, "ranking", name="Ranking tutorial", build=False)
    tutorial_item = TutorialItem.objects.create(
        config=tutorial_config, position=0, source="a", outputs=["b", "c"], expectation={}
    )
    # A crowd study of a protocol of its own (the annotator's protocol stays open to them).
    crowd_config = make_config(
        campaign, "direct_assessment", name="Crowd study", outputs_per_screen=1, items_per_task=2
    )
    crowd_link = crowd_link_create(
        campaign=campaign,
        created_by=owner,
        config=crowd_config,
        platform="prolific",
        id_parameter="PROLIFIC_PID",
        rule="not_failed",
    )
    return Seed(users, campaign, config, assignment, invite, import_job, tutorial_item, crowd_link)


def request(client: Client, method: str, url: str, body: dict[str, Any], is_json: bool) -> Any:
    if method == "GET":
        return client.get(url)
    if not is_json:
        return client.post(url, body) if method == "POST" else client.generic(method, url)
    return client.generic(method, url, json.dumps(body), content_type="application/json")
