"""The annotation page's share of a screen: the criteria as its template draws them, the
document-level score's question, and the data its script reads. The tutorial's page shows its
items with the same template parts and script, so it builds its page from these too."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotation.judging.screens import Screen
from annotation.models import DOCUMENT_SCORE_MAX, DOCUMENT_SCORE_MIN
from annotation.protocols import DA_SCORE, Criterion

# The document-level score's question on the page (its data-output and data-criterion).
DOCUMENT = "document"


def screen_script_data(
    *, screen: Screen, criteria: tuple[Criterion, ...], most: int | None = None
) -> dict[str, Any]:
    """What the annotation page's script reads (``data-*`` of ``annotate-data``): the item, its
    answer, where to send it and the messages it shows. The tutorial's page starts from it too
    and puts its own item and submit in. ``most``: the most items a pull-mode task may grow to
    while more may follow (``annotation.tasking.pull.progress_most``), else None."""
    config = screen.assignment.task.config
    return {
        "submitUrl": reverse("api-assignment-submit", args=[screen.assignment.pk]),
        # A document screen is sent whole, in one request (annotation.judging.screen_api).
        "screenUrl": reverse("api-assignment-screen-submit", args=[screen.assignment.pk]),
        "progressMost": most,
        # The items on the screen: one, or a document screen's (sent together).
        "items": [
            {"id": s.item.pk, "revision": s.revision, "outputs": [o.pk for o in s.outputs]}
            for s in screen.segments
        ]
        or [
            {
                "id": screen.item.pk,
                "revision": screen.revision,
                "outputs": [o.pk for o in screen.outputs],
            }
        ],
        "documents": bool(screen.segments),
        # The document-level score (sent before the segments: the server takes a screen's
        # last segment only once the screen is scored): where to send it and its revision.
        "documentScore": None
        if screen.document_score is None
        else {
            "url": reverse("api-assignment-document-score", args=[screen.assignment.pk]),
            "item": screen.document_score.item_id,
            "revision": screen.document_score.revision,
        },
        "outputs": [o.pk for o in screen.outputs],
        # Each shown output's text exactly as stored, by output id: the span editor counts its
        # offsets on it. The text in the page's markup is not the same string: the HTML parser
        # turns CR LF and CR into LF.
        "texts": {str(o.pk): o.text for o in screen.outputs},
        "criteria": [c.as_json() for c in criteria],
        "fluencyFirst": config.fluency_first,
        "answer": _answer_with_document_score(screen),
        "currentUrl": reverse("annotate", args=[screen.assignment.pk]),
        # The page of item n (from 1) is itemUrl + n + "/": the "Previous item" link.
        "itemUrl": reverse("annotate_item", args=[screen.assignment.pk, 1]).removesuffix("1/"),
        "doneUrl": reverse("my_tasks"),
        "loginUrl": reverse("login"),
        # The script reads the CSRF token from this cookie at each submit (a login in another
        # tab replaces it); None when the cookie is not readable from JavaScript.
        "csrfCookie": (
            None
            if settings.CSRF_USE_SESSIONS or settings.CSRF_COOKIE_HTTPONLY
            else settings.CSRF_COOKIE_NAME
        ),
        "messages": _screen_messages(),
    }


def _answer_with_document_score(screen: Screen) -> dict[str, Any] | None:
    """The answers the page fills in: the screen's, and its document score under the
    question's own key (``document``)."""
    state = screen.document_score
    if state is None or state.score is None:
        return screen.answer
    return {**(screen.answer or {}), DOCUMENT: {DOCUMENT: state.score}}


def document_score_widget(*, screen: Screen) -> dict[str, Any] | None:
    """The document-level score's question as the template draws it (a 0–100 slider with the
    anchors of the kind's own 0–100 scale, if it has one), or None."""
    if screen.document_score is None:
        return None
    anchored = [
        c
        for c in screen.protocol.criteria
        if (c.minimum, c.maximum) == (DOCUMENT_SCORE_MIN, DOCUMENT_SCORE_MAX) and c.scale
    ]
    scale = anchored[0].scale if anchored else DA_SCORE.scale
    return {
        "key": DOCUMENT,
        "min": DOCUMENT_SCORE_MIN,
        "max": DOCUMENT_SCORE_MAX,
        "scale": sorted(scale.items()),
    }


def _screen_messages() -> dict[str, str | list[str]]:
    """The annotation page script's messages, in the user's language."""
    return {
        "incomplete": _("Please answer every question for every translation."),
        "network": _(
            "Could not reach the server. Your answer is still on this page; "
            "press Submit (or Enter) to try again."
        ),
        "failed": _("The answer could not be saved."),
        "retry": _("Your answer is still on this page; press Submit (or Enter) to try again."),
        "loggedOut": _(
            "You are no longer logged in, so your answer was not saved. It is still on "
            "this page: log in again in another tab (or open your invite link again), "
            "then come back here and press Submit (or Enter) to send it."
        ),
        "logIn": _("Log in (opens a new tab)"),
        "holdEnded": _(
            "Your hold on this task has ended, so your answer was not saved. It is still "
            "on this page: press Resume for this task on My tasks in another tab, then "
            "come back here and press Submit (or Enter) to send it. If My tasks says the "
            "task has no place left, take another task there."
        ),
        "myTasks": _("My tasks (opens a new tab)"),
        "progress": _("%(done)s of %(total)s done"),
        "progressOpen": _("%(done)s answered · more may follow, up to %(most)s"),
        "screenProgress": _("%(n)s of %(total)s segments answered on this screen"),
        # Both forms, for the script to pick by the count (English and German: one, other).
        "stillToAnswer": [
            ngettext("%(n)s segment still to answer", "%(n)s segments still to answer", count)
            for count in (1, 2)
        ],
        "stillToAnswerOutputs": [
            ngettext(
                "%(n)s translation still to answer", "%(n)s translations still to answer", count
            )
            for count in (1, 2)
        ],
        "goToFirst": _("go to the first"),
        "showSource": _("Show the whole text"),
        "hideSource": _("Show less"),
        "title": _("Item %(n)s of %(total)s"),
    }


def criteria_widgets(*, criteria: tuple[Criterion, ...]) -> list[dict[str, Any]]:
    """The criteria as the annotation page's template draws them (its ``criteria_view``): a
    slider for a long scale, else choices. The tutorial's page draws its items with them."""
    return [
        {
            "key": c.key,
            "label": c.label,
            "slider": c.maximum - c.minimum > 10,
            "min": c.minimum,
            "max": c.maximum,
            "choices": [(v, c.scale.get(v, "")) for v in range(c.minimum, c.maximum + 1)],
            "scale": sorted(c.scale.items()),
            "needs_source": c.needs_source,
        }
        for c in criteria
    ]
