"""The Content-Security-Policy header of every answer.

The policy is ``settings.EVALSITE_CSP``: ``{directive: [source, ...]}``, the shape of Django 6.0's
``SECURE_CSP`` (Django 5.2 has no CSP support of its own), so moving to Django's middleware later
is a rename. A directive with no sources is sent bare (``upgrade-insecure-requests``).

Some pages get more, laid over the policy: DRF's browsable API (the HTML pages under ``/api/`` a
browser sees) ``settings.EVALSITE_CSP_BROWSABLE_API``, since DRF's page template places a few
buttons with ``style`` attributes (the API's JSON answers get the policy unchanged); a view
decorated with ``csp_additions("SETTING")`` the directives of that setting.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

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


def csp_additions(
    setting: str,
) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """A view decorator: the view's answers carry the site's policy with the directives of the
    setting named ``setting`` laid over it (read on every answer, as the policy is)."""

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @functools.wraps(view)
        def with_policy(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            response = view(request, *args, **kwargs)
            if settings.EVALSITE_CSP:
                policy = {**settings.EVALSITE_CSP, **getattr(settings, setting)}
                response.headers[HEADER] = csp_header(policy)
            return response

        return with_policy

    return decorator


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
