"""Who may open what: owner, co-organizer, annotator, another organizer and anonymous, on every
page and API endpoint that exists."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.test import RequestFactory
from django.urls import reverse

from annotation.permissions import signed_in

pytestmark = pytest.mark.django_db

ROLES = ["owner", "co_organizer", "annotator", "other_organizer", "anonymous"]


# Expected status per role for organizer pages of one campaign: outsiders get 404 (no leak).
CAMPAIGN_PAGES = ["campaign_detail", "campaign_edit", "campaign_upload"]
CAMPAIGN_PAGE_STATUS = {
    "owner": 200,
    "co_organizer": 200,
    "annotator": 403,  # not an organizer at all
    "other_organizer": 404,
    "anonymous": 302,
}


@pytest.mark.parametrize("role", ROLES)
def test_head_answers_as_get_does_without_a_body(as_role, campaign, role) -> None:  # type: ignore[no-untyped-def]
    """Monitors and link checkers send HEAD: read-only pages answer it with GET's status (and
    the same role checks), never 405, and send no body."""
    client = as_role(role)
    for url in (reverse("campaign_detail", args=[campaign.id]), reverse("my_tasks"), "/healthz"):
        head, get = client.head(url), client.get(url)
        assert head.status_code == get.status_code != 405, url
        assert head.content == b"", url


@pytest.mark.parametrize("page", CAMPAIGN_PAGES)
@pytest.mark.parametrize("role", ROLES)
def test_campaign_pages_open_only_for_owner_and_co_organizers(
    as_role, campaign, page, role
) -> None:  # type: ignore[no-untyped-def]
    response = as_role(role).get(reverse(page, args=[campaign.id]))
    assert response.status_code == CAMPAIGN_PAGE_STATUS[role]
    if role == "anonymous":
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("role", ROLES)
def test_posting_an_upload_is_refused_to_outsiders(as_role, campaign, role) -> None:  # type: ignore[no-untyped-def]
    response = as_role(role).post(reverse("campaign_upload", args=[campaign.id]), {})
    expected = {"owner": 400, "co_organizer": 400}.get(role, CAMPAIGN_PAGE_STATUS[role])
    assert response.status_code == expected


@pytest.mark.parametrize(
    ("role", "status", "sees_campaign"),
    [
        ("owner", 200, True),
        ("co_organizer", 200, True),
        ("other_organizer", 200, False),
        ("annotator", 403, False),
        ("anonymous", 302, False),
    ],
)
def test_the_campaign_list_shows_only_managed_campaigns(
    as_role, campaign, role, status, sees_campaign
) -> None:  # type: ignore[no-untyped-def]
    response = as_role(role).get(reverse("campaign_list"))
    assert response.status_code == status
    assert (campaign.name in response.content.decode()) == sees_campaign


@pytest.mark.parametrize(
    ("role", "status"),
    [("owner", 200), ("other_organizer", 200), ("annotator", 403), ("anonymous", 302)],
)
def test_only_organizers_may_create_campaigns(as_role, role, status) -> None:  # type: ignore[no-untyped-def]
    assert as_role(role).get(reverse("campaign_create")).status_code == status


@pytest.mark.parametrize(
    ("role", "status", "sees_campaign"),
    [
        ("annotator", 200, True),
        ("owner", 200, False),
        ("other_organizer", 200, False),
        ("anonymous", 302, False),
    ],
)
def test_my_tasks_lists_only_campaigns_the_user_annotates(
    as_role, campaign, role, status, sees_campaign
) -> None:  # type: ignore[no-untyped-def]
    response = as_role(role).get(reverse("my_tasks"))
    assert response.status_code == status
    assert (campaign.name in response.content.decode()) == sees_campaign


@pytest.mark.parametrize(
    ("role", "target"),
    [("owner", "campaign_list"), ("annotator", "my_tasks"), ("anonymous", "login")],
)
def test_home_sends_each_role_to_its_page(as_role, role, target) -> None:  # type: ignore[no-untyped-def]
    response = as_role(role).get(reverse("home"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse(target))


@pytest.mark.parametrize("role", ROLES)
def test_the_admin_is_for_staff_only(as_role, role) -> None:  # type: ignore[no-untyped-def]
    response = as_role(role).get("/admin/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


API_DETAIL = ["api-campaign-detail", "api-campaign-contents", "api-campaign-segments"]
API_STATUS = {
    "owner": 200,
    "co_organizer": 200,
    "annotator": 403,
    "other_organizer": 404,
    "anonymous": 401,
}


@pytest.mark.parametrize("endpoint", API_DETAIL)
@pytest.mark.parametrize("role", ROLES)
def test_api_campaign_endpoints_answer_only_owner_and_co_organizers(
    as_role, campaign, endpoint, role
) -> None:  # type: ignore[no-untyped-def]
    response = as_role(role).get(reverse(endpoint, args=[campaign.id]))
    assert response.status_code == API_STATUS[role]


@pytest.mark.parametrize("role", ROLES)
def test_api_update_and_upload_are_refused_to_outsiders(as_role, campaign, role) -> None:  # type: ignore[no-untyped-def]
    client = as_role(role)
    patch = client.patch(
        reverse("api-campaign-detail", args=[campaign.id]),
        {"description": "changed"},
        content_type="application/json",
    )
    upload = client.post(reverse("api-campaign-upload", args=[campaign.id]), {})
    if role in ("owner", "co_organizer"):
        assert patch.status_code == 200
        assert upload.status_code == 400  # allowed, but no files
    else:
        assert patch.status_code == API_STATUS[role]
        assert upload.status_code == API_STATUS[role]


@pytest.mark.parametrize(
    ("role", "status", "count"),
    [
        ("owner", 200, 1),
        ("co_organizer", 200, 1),
        ("other_organizer", 200, 0),
        ("annotator", 403, None),
        ("anonymous", 401, None),
    ],
)
def test_api_campaign_list_holds_only_managed_campaigns(
    as_role, campaign, role, status, count
) -> None:  # type: ignore[no-untyped-def]
    response = as_role(role).get(reverse("api-campaign-list"))
    assert response.status_code == status
    if count is not None:
        assert response.json()["count"] == count


@pytest.mark.parametrize(
    ("role", "status"),
    [("owner", 201), ("annotator", 403), ("anonymous", 401)],
)
def test_api_only_organizers_may_create_campaigns(as_role, role, status) -> None:  # type: ignore[no-untyped-def]
    response = as_role(role).post(
        reverse("api-campaign-list"),
        {"name": "New", "source_language": "en", "target_language": "de"},
        content_type="application/json",
    )
    assert response.status_code == status


@pytest.fixture
def config(campaign):  # type: ignore[no-untyped-def]
    from annotation.models import ProtocolConfig

    return ProtocolConfig.objects.create(
        campaign=campaign, name="DA", protocol="direct_assessment", mode="source", items_per_task=4
    )


SETUP_PAGES = [
    ("get", "annotation_setup", False),
    ("get", "config_tasks", True),
    ("post", "config_build", True),
    ("post", "config_assign", True),
    ("post", "invites_create", False),
]


@pytest.mark.parametrize(("method", "page", "with_config"), SETUP_PAGES)
@pytest.mark.parametrize("role", ROLES)
def test_annotation_setup_pages_are_for_owner_and_co_organizers(  # type: ignore[no-untyped-def]
    as_role, campaign, config, method, page, with_config, role
) -> None:
    args = [campaign.id, config.pk] if with_config else [campaign.id]
    response = getattr(as_role(role), method)(reverse(page, args=args))
    if role in ("owner", "co_organizer"):
        assert response.status_code == (200 if method == "get" else 302)
    else:
        assert response.status_code == CAMPAIGN_PAGE_STATUS[role]


@pytest.mark.parametrize(
    ("role", "status"),
    [("annotator", 302), ("owner", 404), ("other_organizer", 404), ("anonymous", 302)],
)
def test_only_the_campaigns_annotators_can_take_its_tasks(
    as_role, campaign, config, role, status
) -> None:  # type: ignore[no-untyped-def]
    from annotation.tasking.build import tasks_build

    tasks_build(config=config)
    response = as_role(role).post(reverse("task_take", args=[config.pk]))
    assert response.status_code == status
    if role == "annotator":
        assert response["Location"].startswith("/annotate/")


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name", ["api_schema", "api_docs"])
def test_the_api_schema_and_docs_are_public_and_carry_no_campaign_data(
    as_role, campaign, role, name
) -> None:  # type: ignore[no-untyped-def]
    # Like most APIs, the description of the endpoints is public; every endpoint it describes
    # still needs a login and the campaign role (the tests above).
    response = as_role(role).get(reverse(name))
    assert response.status_code == 200
    assert campaign.name.encode() not in response.content
    assert str(campaign.id).encode() not in response.content


@pytest.mark.parametrize("role", ROLES)
def test_logout_ends_the_session_and_only_by_post(as_role, role) -> None:  # type: ignore[no-untyped-def]
    client = as_role(role)
    assert client.get(reverse("logout")).status_code == 405
    response = client.post(reverse("logout"))
    assert response.status_code == 302
    assert response["Location"] == reverse("login")
    after = client.get(reverse("campaign_list"))
    assert after.status_code == 302
    assert after["Location"].startswith(reverse("login"))


def test_signed_in_gives_the_account_and_refuses_an_anonymous_request() -> None:
    """The narrowing the views use behind their login checks: the account itself, and 403 were
    an anonymous request ever to reach it."""
    request = RequestFactory().get("/")
    request.user = AnonymousUser()
    with pytest.raises(PermissionDenied):
        signed_in(request)
    account = User(username="ann")
    request.user = account
    assert signed_in(request) is account
