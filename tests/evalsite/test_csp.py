"""Every answer carries the site's Content-Security-Policy: pages, API answers in JSON, errors;
a view that sets a policy of its own keeps it."""

from __future__ import annotations

import re

import pytest
from django.http import HttpResponse
from django.test import Client, RequestFactory
from django.urls import reverse
from rest_framework.authtoken.models import Token

from evalsite.csp import ContentSecurityPolicyMiddleware, csp_header
from tests.conftest import ROOT

POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'"
)


@pytest.mark.django_db
def test_a_page_carries_the_strict_policy_and_may_not_be_framed(client: Client) -> None:
    response = client.get(reverse("login"))
    assert response.status_code == 200
    assert response["Content-Security-Policy"] == POLICY
    assert response["X-Frame-Options"] == "DENY"


def test_an_api_answer_in_json_carries_the_same_policy(client: Client, owner) -> None:  # type: ignore[no-untyped-def]
    token = Token.objects.create(user=owner)
    response = client.get(
        "/api/campaigns/", HTTP_AUTHORIZATION=f"Token {token.key}", HTTP_ACCEPT="application/json"
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Content-Security-Policy"] == POLICY


def test_the_browsable_apis_pages_alone_may_also_have_style_attributes(
    client: Client, owner
) -> None:  # type: ignore[no-untyped-def]
    # DRF's page template places buttons with style attributes; scripts stay as strict.
    client.force_login(owner)
    html = client.get("/api/campaigns/", HTTP_ACCEPT="text/html")
    assert html["Content-Type"].startswith("text/html")
    assert html["Content-Security-Policy"] == POLICY + "; style-src-attr 'unsafe-inline'"
    json = client.get("/api/campaigns/", HTTP_ACCEPT="application/json")
    assert json["Content-Security-Policy"] == POLICY


def test_the_dashboard_allows_the_two_style_attributes_plotly_sets_and_no_other(
    as_role, campaign
) -> None:  # type: ignore[no-untyped-def]
    response = as_role("owner").get(reverse("campaign_dashboard", args=[campaign.pk]))
    assert response.status_code == 200
    assert response["Content-Security-Policy"] == POLICY + (
        "; style-src-attr 'unsafe-hashes' 'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=' "
        "'sha256-AR/cKIZjWPcPmBUPDA6oti9XBiTbJvz0Cro2J1VzzS8='"
    )


@pytest.mark.django_db
def test_an_error_answer_carries_the_policy(client: Client) -> None:
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Security-Policy"] == POLICY


def test_the_header_lists_the_directives_in_order_and_a_bare_one_alone() -> None:
    policy = {
        "default-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "upgrade-insecure-requests": [],
    }
    assert (
        csp_header(policy) == "default-src 'self'; img-src 'self' data:; upgrade-insecure-requests"
    )


def test_a_view_with_a_policy_of_its_own_keeps_it() -> None:
    def view(request: object) -> HttpResponse:
        response = HttpResponse("framed on purpose")
        response["Content-Security-Policy"] = "frame-ancestors 'self'"
        return response

    response = ContentSecurityPolicyMiddleware(view)(RequestFactory().get("/"))
    assert response["Content-Security-Policy"] == "frame-ancestors 'self'"


def test_an_empty_policy_setting_sends_no_header(settings) -> None:  # type: ignore[no-untyped-def]
    settings.EVALSITE_CSP = {}
    response = ContentSecurityPolicyMiddleware(lambda request: HttpResponse("ok"))(
        RequestFactory().get("/")
    )
    assert "Content-Security-Policy" not in response


def test_no_template_of_ours_has_an_inline_script_style_or_event_handler() -> None:
    # What the policy refuses, found before any browser runs: inline scripts (JSON data blocks
    # are not run), <style> elements, style and on* attributes, javascript: URLs. Pages that no
    # browser test opens are covered here. Template comments may name them.
    refused = re.compile(
        r"<script(?![^>]*\b(?:src=|type=\"application/json\"))[^>]*>|<style\b"
        r"|\sstyle=|\son[a-z]+=|javascript:",
        re.IGNORECASE,
    )
    templates = sorted((ROOT / "templates").rglob("*.html"))
    assert len(templates) > 20
    found = {
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in templates
        for match in refused.finditer(re.sub(r"{#.*?#}", "", path.read_text()))
    }
    assert found == set()
