"""The Content-Security-Policy header of every answer.

The policy is ``settings.EVALSITE_CSP``: ``{directive: [source, ...]}``, the shape of Django 6.0's
``SECURE_CSP`` (Django 5.2 has no CSP support of its own), so moving to Django's middleware later
is a rename. A directive with no sources is sent bare (``upgrade-insecure-requests``).

One kind of page gets more: DRF's browsable API (the HTML pages under ``/api/`` a browser sees)
has ``settings.EVALSITE_CSP_BROWSABLE_API`` laid over the policy, since DRF's page template places
a few buttons with ``style`` attributes. The API's JSON answers get the policy unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from rest_framework.renderers import BrowsableAPIRenderer

HEADER = "Content-Security-Policy"


def csp_header(policy: Mapping[str, Sequence[str]]) -> str:
    """The header value of ``policy``: directives in the given order, separated by ``"; "``."""
    return "; ".join(" ".join([directive, *sources]) for directive, sources in policy.items())


def csp_policy_for(response: HttpResponse) -> Mapping[str, Sequence[str]]:
    """The policy of ``response``: the site's, with the browsable API's additions on its pages."""
    if isinstance(getattr(response, "accepted_renderer", None), BrowsableAPIRenderer):
        return {**settings.EVALSITE_CSP, **settings.EVALSITE_CSP_BROWSABLE_API}
    return settings.EVALSITE_CSP  # type: ignore[no-any-return]


class ContentSecurityPolicyMiddleware:
    """Send the policy (``csp_policy_for``) on every response that does not carry one of its own.

    A view that needs another policy sets the header itself; this middleware leaves it alone.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if HEADER not in response.headers and settings.EVALSITE_CSP:
            response.headers[HEADER] = csp_header(csp_policy_for(response))
        return response
