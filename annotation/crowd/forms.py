"""Forms of crowd links: the organizer's settings, a worker's id on arrival, the verify box."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.validators import RegexValidator, URLValidator
from django.utils.translation import gettext_lazy as _

from annotation.models import (
    CODE_PATTERN,
    DEFAULT_PARAMETER,
    PARAMETER_PATTERN,
    WORKER_ID_PATTERN,
    Campaign,
    CompletionRule,
    CrowdPlatform,
    ProtocolConfig,
)

_CODE_HELP = _(
    "Letters, digits, - and _. Leave empty to give every worker a code of their own "
    "(verify it here or through the API)."
)


class CrowdLinkForm(forms.Form):
    """An organizer's settings of a crowd link."""

    platform = forms.ChoiceField(label=_("Platform"), choices=CrowdPlatform.choices)
    config = forms.ModelChoiceField(
        label=_("Protocol"),
        queryset=ProtocolConfig.objects.none(),
        help_text=_("Each worker gets one task of this protocol."),
    )
    id_parameter = forms.CharField(
        label=_("Worker id parameter"),
        max_length=40,
        required=False,
        validators=[RegexValidator(PARAMETER_PATTERN, _("A URL parameter name, e.g. pid."))],
        help_text=_("Empty: PROLIFIC_PID on Prolific, workerId on Mechanical Turk."),
    )
    rule = forms.ChoiceField(
        label=_("Completion rule"),
        choices=CompletionRule.choices,
        initial=CompletionRule.NOT_FAILED,
        help_text=_(
            "The quality test is the campaign's bad-reference test on the worker's own "
            "judgments; with fewer than two bad references in a task it cannot fail."
        ),
    )
    pass_code = forms.CharField(
        label=_("Pass code"),
        max_length=40,
        required=False,
        validators=[RegexValidator(CODE_PATTERN)],
        help_text=_CODE_HELP,
    )
    fail_code = forms.CharField(
        label=_("Fail code"),
        max_length=40,
        required=False,
        validators=[RegexValidator(CODE_PATTERN)],
        help_text=_CODE_HELP,
    )
    return_url = forms.CharField(
        label=_("Return URL"),
        max_length=500,
        required=False,
        help_text=_(
            "https only; {code} in it becomes the worker's code. Empty on Prolific: "
            "https://app.prolific.com/submissions/complete?cc={code}."
        ),
    )
    label = forms.CharField(label=_("Label"), max_length=150, required=False)
    days = forms.IntegerField(label=_("Valid for (days)"), min_value=1, max_value=365, initial=30)

    def __init__(self, *args: Any, campaign: Campaign, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        configs = ProtocolConfig.objects.filter(campaign=campaign).order_by("created")
        field = self.fields["config"]
        field.queryset = configs  # type: ignore[attr-defined]
        field.label_from_instance = (  # type: ignore[attr-defined]
            lambda config: f"{config.name} · {config.get_protocol_display()}"
        )

    def clean_return_url(self) -> str:
        url: str = self.cleaned_data["return_url"].strip()
        if url:
            # Checked with a code in place: the URL the worker is sent to must be https.
            URLValidator(schemes=["https"], message=_("Enter an https URL."))(
                url.replace("{code}", "CODE")
            )
        return url

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        platform = data.get("platform")
        if platform and not data.get("id_parameter"):
            default = DEFAULT_PARAMETER.get(platform)  # type: ignore[call-overload]
            if default is None:
                self.add_error(
                    "id_parameter", _("Name the URL parameter that carries the worker's id.")
                )
            else:
                data["id_parameter"] = default
        if data.get("pass_code") and data.get("pass_code") == data.get("fail_code"):
            self.add_error("fail_code", _("The fail code must differ from the pass code."))
        return data


class WorkerIdForm(forms.Form):
    """The worker id a crowd link was opened with."""

    worker_id = forms.CharField(
        max_length=64,
        validators=[
            RegexValidator(
                WORKER_ID_PATTERN,
                _("This worker id is not valid: at most 64 letters, digits, - and _."),
            )
        ],
        error_messages={"required": _("This link needs your worker id from the platform.")},
    )


class VerifyForm(forms.Form):
    """The organizer's verify box: a worker id, optionally with the code they sent."""

    worker = forms.CharField(label=_("Worker id"), max_length=64)
    code = forms.CharField(label=_("Code"), max_length=40, required=False)


class CrowdLinkProtocolForm(forms.Form):
    """The protocol a crowd link serves from now on (its study URL stays the same)."""

    config = forms.ModelChoiceField(label=_("Protocol"), queryset=ProtocolConfig.objects.none())

    def __init__(self, *args: Any, campaign: Campaign, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["config"]
        field.queryset = ProtocolConfig.objects.filter(  # type: ignore[attr-defined]
            campaign=campaign
        ).order_by("created")
        field.label_from_instance = (  # type: ignore[attr-defined]
            lambda config: f"{config.name} · {config.get_protocol_display()}"
        )


class CrowdRosterForm(forms.Form):
    """Whether the campaign's own annotators may take tasks of the protocols its crowd links
    serve."""

    offer = forms.BooleanField(
        label=_("Offer these tasks to the campaign's own annotators too"),
        required=False,
        help_text=_(
            "Off (the default): annotators you added or invited personally are not offered "
            "tasks of a protocol that a crowd link serves; you can still assign them one."
        ),
    )
