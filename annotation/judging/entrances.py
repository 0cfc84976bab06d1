"""Entrances: ways annotators come to a campaign that bring rules of their own to the
annotator's pages (crowd links, ``annotation.crowd.entrance.CrowdEntrance``, are the one there
is: a worker arrives through the study's link, does one task and ends on a completion code).

A package that keeps an entrance builds on the annotation screen, so the annotator's pages
cannot import it: the package's entrance is registered here when Django starts
(``entrance_register`` in ``AnnotationConfig.ready``), and the pages ask every registered one.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse

from annotation.models import Assignment, Invite, ProtocolConfig


@dataclass(frozen=True)
class Take:
    """An entrance's take of a protocol's task for one of its annotators: their task and the
    page that shows it (its item, or its end once finished), or no task (``assignment`` None)
    and why, as the API's ``code`` and the ``message`` both say it."""

    assignment: Assignment | None
    page: str = ""
    code: str = ""
    message: str = ""


class Entrance:
    """The hooks an entrance fills; each answers None for what is not the entrance's own."""

    # The entrance's name in the registry: registering one of the same key replaces it.
    key = ""

    def invite_page(self, request: HttpRequest, invite: Invite) -> HttpResponse | None:
        """The page of an invite link that is this entrance's, or None."""
        return None

    def take(self, *, annotator: User, config: ProtocolConfig) -> Take | None:
        """A take of ``config`` by one of this entrance's annotators, or None for anyone else:
        the usual take applies."""
        return None

    def finished_page(self, *, annotator: User, assignment: Assignment) -> str | None:
        """The page a finished task of one of this entrance's annotators ends on, or None for
        anyone else: My tasks then says the task is finished."""
        return None


_entrances: dict[str, Entrance] = {}


def entrance_register(entrance: Entrance) -> None:
    """Add ``entrance`` to the ones the annotator's pages ask (one of the same key is replaced:
    Django may start the app more than once in a process)."""
    _entrances[entrance.key] = entrance


def entrance_invite_page(request: HttpRequest, invite: Invite) -> HttpResponse | None:
    """The page of the entrance whose invite link ``invite`` is, or None (a personal one)."""
    for entrance in _entrances.values():
        page = entrance.invite_page(request, invite)
        if page is not None:
            return page
    return None


def entrance_take(*, annotator: User, config: ProtocolConfig) -> Take | None:
    """The take of the entrance the annotator came through, or None: the usual take."""
    for entrance in _entrances.values():
        take = entrance.take(annotator=annotator, config=config)
        if take is not None:
            return take
    return None


def entrance_finished_page(*, annotator: User, assignment: Assignment) -> str | None:
    """The page the annotator's finished ``assignment`` ends on, or None (My tasks)."""
    for entrance in _entrances.values():
        page = entrance.finished_page(annotator=annotator, assignment=assignment)
        if page is not None:
            return page
    return None
