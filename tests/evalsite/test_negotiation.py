"""Content negotiation (evalsite/negotiation.py): its shortcut answers as DRF's
``DefaultContentNegotiation`` — the reference here — for every Accept header, query string, format
suffix and renderer list below, shortcut or not; and the API uses it."""

from __future__ import annotations

import itertools

import pytest
from django.urls import reverse
from rest_framework import exceptions, renderers
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.test import APIClient, APIRequestFactory
from rest_framework.views import APIView

from evalsite.negotiation import ContentNegotiation

ACCEPTS = [
    None,
    "*/*",
    "application/json",
    "application/json; indent=4",
    "text/html",
    "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "application/xml",
    "application/*",
    "application/json, text/html",
    " application/json",
    "",
    "image/png",
]
QUERIES = ["", "format=json", "format=api", "limit=5", "format=xml"]
SUFFIXES = [None, "json", "api"]


class TextRenderer(renderers.BaseRenderer):
    media_type = "text/plain"
    format = "txt"


RENDERER_LISTS = [
    [renderers.JSONRenderer(), renderers.BrowsableAPIRenderer()],
    [renderers.JSONRenderer()],
    [renderers.BrowsableAPIRenderer(), renderers.JSONRenderer()],
    [TextRenderer(), renderers.JSONRenderer()],
    [TextRenderer()],
]


def negotiated(negotiation: DefaultContentNegotiation, request: Request, **kw: object) -> object:
    try:
        renderer, media_type = negotiation.select_renderer(request, **kw)  # type: ignore[arg-type]
    except (exceptions.NotAcceptable, Exception) as exc:  # Http404 for an unknown format
        return ("refused", type(exc).__name__)
    return (type(renderer).__name__, media_type)


def test_every_case_answers_as_drf() -> None:
    factory = APIRequestFactory()
    ours, reference = ContentNegotiation(), DefaultContentNegotiation()
    shortcuts = 0
    for accept, query, suffix, renderer_list in itertools.product(
        ACCEPTS, QUERIES, SUFFIXES, RENDERER_LISTS
    ):
        headers = {} if accept is None else {"HTTP_ACCEPT": accept}
        request = Request(factory.get(f"/api/x/?{query}" if query else "/api/x/", **headers))
        kw = {"renderers": renderer_list, "format_suffix": suffix}
        expected = negotiated(reference, request, **kw)
        assert negotiated(ours, request, **kw) == expected, (accept, query, suffix, renderer_list)
        if accept in (None, "*/*", "application/json") and not query and suffix is None:
            shortcuts += renderer_list[0].media_type == "application/json"
    # The cases the shortcut answers are among them: 3 headers x 2 renderer lists.
    assert shortcuts == 6


def test_the_api_negotiates_with_it() -> None:
    class Probe(APIView):
        pass

    assert isinstance(Probe().get_content_negotiator(), ContentNegotiation)


@pytest.mark.django_db
def test_api_answers_json_or_the_browsable_page(annotator) -> None:  # type: ignore[no-untyped-def]
    client = APIClient()
    client.force_authenticate(annotator)
    url = reverse("api-my-tasks")
    for accept in (None, "*/*", "application/json"):
        headers = {} if accept is None else {"HTTP_ACCEPT": accept}
        response = client.get(url, **headers)
        assert response.status_code == 200
        assert response["Content-Type"] == "application/json"
    page = client.get(url, HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")
    assert page.status_code == 200
    assert page["Content-Type"].startswith("text/html")
    assert client.get(url, HTTP_ACCEPT="image/png").status_code == 406
