"""Forms of the organizer pages. Every input passes through one of these."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import UploadedFile
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from annotation.campaigns.selectors import OpenHold, campaign_open_holds
from annotation.campaigns.uploads import UploadFile, upload_file_read
from annotation.models import Campaign, ProtocolConfig
from annotation.permissions import user_is_organizer
from annotation.protocols import PROTOCOLS, SCORES_SETTING
from annotation.protocols.presets import PROTOCOL_PRESETS


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class NamedFileField(forms.FileField):
    """A file field whose errors name the file ("src.txt: The submitted file is empty."), as
    every other upload error does."""

    def clean(self, data: Any, initial: Any = None) -> Any:
        try:
            return super().clean(data, initial)
        except forms.ValidationError as error:
            name = getattr(data, "name", "")
            if not name:
                raise
            raise forms.ValidationError([f"{name}: {m}" for m in error.messages]) from None


class MultipleFileField(forms.FileField):
    """A file field that accepts several files (Django's documented pattern)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile]:
        files = [d for d in data if d] if isinstance(data, list | tuple) else [data] if data else []
        cleaned, errors = [], []
        for upload in files:
            try:
                cleaned.append(super().clean(upload, initial))
            except forms.ValidationError as error:
                # Name the file: among several, "The submitted file is empty." says not which.
                name = getattr(upload, "name", "")
                errors += [f"{name}: {message}" if name else message for message in error.messages]
        if errors:
            raise forms.ValidationError(errors)
        return cleaned


class CampaignForm(forms.ModelForm):
    co_organizers = forms.CharField(
        label=_("Co-organizers"),
        required=False,
        help_text=_("Usernames of other organizers, separated by commas."),
    )
    # Shown only when closing would cut tasks short: the organizer confirms it.
    confirm_close = forms.BooleanField(
        label=_("Close it anyway: those tasks stay unfinished"),
        required=False,
        widget=forms.HiddenInput,
    )

    class Meta:
        model = Campaign
        fields = ["name", "source_language", "target_language", "description", "status"]
        widgets = {"description": forms.Textarea(attrs={"rows": 4})}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["co_organizers"].initial = ", ".join(
                self.instance.organizers.order_by("username").values_list("username", flat=True)
            )

    def clean(self) -> dict[str, Any]:
        """Closing a campaign whose tasks annotators hold is confirmed first: the form lists
        them (``open_holds``) and asks again."""
        super().clean()
        cleaned = self.cleaned_data
        self.open_holds: list[OpenHold] = []
        closing = cleaned.get("status") == Campaign.Status.CLOSED and (
            self.instance.pk and self.initial.get("status") != Campaign.Status.CLOSED
        )
        if closing and not cleaned.get("confirm_close"):
            self.open_holds = campaign_open_holds(campaign=self.instance)
            if self.open_holds:
                self.fields["confirm_close"].widget = forms.CheckboxInput()
                raise forms.ValidationError(
                    ngettext(
                        "An annotator holds an unfinished task of this campaign. Closing it "
                        "ends that task where it is (the answers so far are kept) and tells "
                        "them on My tasks. Tick the box below to close it anyway.",
                        "%(n)d unfinished tasks of this campaign are held by annotators. "
                        "Closing it ends them where they are (the answers so far are kept) and "
                        "tells their annotators on My tasks. Tick the box below to close it "
                        "anyway.",
                        len(self.open_holds),
                    )
                    % {"n": len(self.open_holds)}
                )
        return cleaned

    def clean_co_organizers(self) -> list[Any]:
        names = [n.strip() for n in self.cleaned_data["co_organizers"].split(",") if n.strip()]
        users = list(get_user_model().objects.filter(username__in=names))
        found = {u.username: u for u in users}
        unknown = [n for n in names if n not in found]
        if unknown:
            raise forms.ValidationError(
                _("No such user: %(names)s"), params={"names": ", ".join(unknown)}
            )
        not_organizers = [u.username for u in users if not user_is_organizer(u)]
        if not_organizers:
            raise forms.ValidationError(
                _("Not an organizer: %(names)s"), params={"names": ", ".join(not_organizers)}
            )
        return users


class UploadForm(forms.Form):
    """Plain-text files go in source/references/systems/doc_ids; TSV, JSONL or WMT XML in data."""

    source = NamedFileField(
        label=_("Source text"), required=False, help_text=_("One segment per line, UTF-8.")
    )
    references = MultipleFileField(
        label=_("References"),
        required=False,
        help_text=_("One or more files, aligned with the source."),
    )
    systems = MultipleFileField(
        label=_("System outputs"),
        required=False,
        help_text=_("Named <system>.txt or <system>.<run>.txt, e.g. nmt.opt0.txt."),
    )
    doc_ids = NamedFileField(
        label=_("Document ids"), required=False, help_text=_("Optional: one document id per line.")
    )
    # A field named like BaseForm.data: Django's metaclass takes declared fields off the class,
    # the stubs see a clash.
    data = MultipleFileField(  # type: ignore[assignment]
        label=_("TSV, JSONL or WMT XML"),
        required=False,
        help_text=_("Instead of plain text: one .tsv/.jsonl file, or WMT .xml files."),
    )
    replace = forms.BooleanField(
        label=_("Replace existing systems of the same name"), required=False, label_suffix=""
    )

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        files = ("source", "references", "systems", "doc_ids", "data")
        # A file refused by its own field (an empty one) was chosen: its error says why.
        if not any(cleaned.get(f) or f in self.errors for f in files):
            raise forms.ValidationError(_("Choose at least one file to upload."))
        return cleaned

    def upload_files(self) -> list[UploadFile]:
        """The chosen files, read, each tagged with the field it came from."""
        return upload_files_from(self.cleaned_data)


def upload_files_from(cleaned: dict[str, Any]) -> list[UploadFile]:
    """Read the uploaded files, refusing an oversized one before reading it into memory."""
    limit = settings.EVALSITE_UPLOAD_MAX_BYTES
    files: list[UploadFile] = []
    for role in ("source", "references", "systems", "doc_ids", "data"):
        value = cleaned.get(role)
        for f in value if isinstance(value, list) else [value] if value else []:
            files.append(upload_file_read(f, max_bytes=limit, role=role))
    return files


# A year: a longer hold means nothing, and on SQLite, where integers have no column limit,
# "now + hold" past the year 9999 made every pull and submit of the protocol a server error.
MAX_HOLD_MINUTES = 365 * 24 * 60


# The largest weight a kind's number setting may have: MQM's non-translation, whose five
# errors make the bottom of the MQM score's scale (−125).
MAX_SETTING = 25.0


def setting_field_name(kind: str, key: str) -> str:
    """The form field of a kind's number setting (``mqm_major``)."""
    return f"{kind}_{key}"


class ProtocolConfigForm(forms.ModelForm):
    """An organizer's settings for one protocol of a campaign, with the numbers its kind asks
    for (MQM's weights: one field per kind and number, shown when the kind is chosen). A
    preset (annotation/protocols/presets.py) is not stored: on the page, choosing one fills
    the fields in (static/annotation/protocol_form.js); the API fills in the fields its
    request leaves out."""

    preset = forms.ChoiceField(
        label=_("Preset"),
        required=False,
        choices=[("", _("None: set the fields below"))]
        + [(p.key, p.label) for p in PROTOCOL_PRESETS.values()],
        help_text=_("A published design in one choice: it fills in the fields below."),
    )
    hold_minutes = ProtocolConfig._meta.get_field("hold_minutes").formfield(
        max_value=MAX_HOLD_MINUTES
    )

    class Meta:
        model = ProtocolConfig
        fields = [
            "name",
            "protocol",
            "mode",
            "fluency_first",
            "outputs_per_screen",
            "screen",
            "document_window",
            "document_score",
            "merge_identical",
            "items_per_task",
            "annotations_per_task",
            "qc_bad_reference",
            "qc_repeat",
            "qc_reference",
            "context_segments",
            "hold_minutes",
            "seed",
            "instructions",
            "allocation",
            "allocation_budget",
            "allocation_top_k",
            "allocation_level",
        ]
        widgets = {"instructions": forms.Textarea(attrs={"rows": 3})}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The page offers each kind's own modes, no "outputs per screen" for a kind that shows
        # one and "fluency first" only where the kind allows it
        # (static/annotation/protocol_form.js reads these; the server checks anyway).
        self.fields["protocol"].widget.attrs.update(
            {
                "data-modes": json.dumps(
                    {key: [m.key for m in kind.modes] for key, kind in PROTOCOLS.items()}
                ),
                "data-single-output": json.dumps(
                    [key for key, kind in PROTOCOLS.items() if kind.single_output]
                ),
                "data-fluency-first": json.dumps(
                    [key for key, kind in PROTOCOLS.items() if kind.fluency_first_allowed]
                ),
                "data-document-screens": json.dumps(
                    [key for key, kind in PROTOCOLS.items() if kind.document_screens_allowed]
                ),
                "data-default-outputs": json.dumps(
                    {key: kind.default_outputs for key, kind in PROTOCOLS.items()}
                ),
            }
        )
        self.fields["preset"].widget.attrs["data-presets"] = json.dumps(
            {key: dict(p.values) for key, p in PROTOCOL_PRESETS.items()}
        )
        self.order_fields(["preset"])
        # Left out, k is the kind's own (1 for ESA and MQM, as WMT and Google run them).
        self.fields["outputs_per_screen"].required = False
        # Absent from a form posted by a client that does not know them: segment screens.
        self.fields["screen"].required = False
        self.fields["document_window"].required = False
        # Absent from a form posted by a client that does not know them: prebuilt tasks.
        for name in ("allocation", "allocation_budget", "allocation_top_k", "allocation_level"):
            self.fields[name].required = False
        for key, kind in PROTOCOLS.items():
            for setting in kind.number_settings:
                self.fields[setting_field_name(key, setting.key)] = forms.FloatField(
                    label=setting.label,
                    required=False,
                    initial=setting.default,
                    min_value=0,
                    max_value=MAX_SETTING,
                    help_text=_("Empty: %(default)s.") % {"default": f"{setting.default:g}"},
                    widget=forms.NumberInput(attrs={"step": "any", "data-protocol": key}),
                )

    def clean_screen(self) -> str:
        return self.cleaned_data.get("screen") or ProtocolConfig.Screen.SEGMENT

    def clean_document_window(self) -> int:
        return self.cleaned_data.get("document_window") or 0

    def clean_allocation(self) -> str:
        return self.cleaned_data.get("allocation") or ProtocolConfig.Allocation.PREBUILT

    def clean_allocation_budget(self) -> int:
        return self.cleaned_data.get("allocation_budget") or 0

    def clean_allocation_top_k(self) -> int:
        return self.cleaned_data.get("allocation_top_k") or 3

    def clean_allocation_level(self) -> float:
        level = self.cleaned_data.get("allocation_level")
        return 0.05 if level is None else level

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        protocol = PROTOCOLS.get(cleaned.get("protocol", ""))
        mode = cleaned.get("mode")
        if protocol and mode and mode not in {m.key for m in protocol.modes}:
            self.add_error(
                "mode",
                _("%(protocol)s offers: %(modes)s.")
                % {
                    "protocol": protocol.name,
                    "modes": ", ".join(str(m.label) for m in protocol.modes),
                },
            )
        if (
            protocol
            and cleaned.get("outputs_per_screen") is None
            and not self.has_error("outputs_per_screen")
        ):
            cleaned["outputs_per_screen"] = protocol.default_outputs
        k = cleaned.get("outputs_per_screen")
        if protocol and protocol.max_outputs is not None and k and k > protocol.max_outputs:
            self.add_error(
                "outputs_per_screen",
                _(
                    "%(protocol)s shows at most %(max)d translations per screen, so that every "
                    "rank is one key (1–%(max)d)."
                )
                % {"protocol": protocol.name, "max": protocol.max_outputs},
            )
        if cleaned.get("fluency_first") and protocol and not protocol.fluency_first_allowed:
            self.add_error("fluency_first", _("Only adequacy and fluency has this option."))
        if (
            cleaned.get("screen") == ProtocolConfig.Screen.DOCUMENT
            and protocol
            and not protocol.document_screens_allowed
        ):
            self.add_error(
                "screen",
                _(
                    "%(protocol)s compares translations of one segment: it has no document "
                    "screens (direct assessment, ESA and MQM have)."
                )
                % {"protocol": protocol.name},
            )
        if (
            cleaned.get("allocation", ProtocolConfig.Allocation.PREBUILT)
            != ProtocolConfig.Allocation.PREBUILT
            and cleaned.get("screen") == ProtocolConfig.Screen.DOCUMENT
        ):
            self.add_error(
                "allocation", _("Pull modes choose one screen at a time: use segment screens.")
            )
        if (
            cleaned.get("document_score")
            and cleaned.get("screen") != ProtocolConfig.Screen.DOCUMENT
            and "screen" not in self.errors
        ):
            self.add_error(
                "document_score",
                _("A document-level score is asked on document screens only: choose them above."),
            )
        qc = sum(cleaned.get(f) or 0 for f in ("qc_bad_reference", "qc_repeat", "qc_reference"))
        if qc > 60:
            raise forms.ValidationError(_("At most 60 of every 100 items can be QC items."))
        for key, kind in PROTOCOLS.items():
            if protocol is None or key != protocol.key:
                # Another kind's numbers (hidden on the page) are not this protocol's.
                for setting in kind.number_settings:
                    self.errors.pop(setting_field_name(key, setting.key), None)
        if protocol:
            # How the stored scores were given (an import's) stays what it was.
            given = {k: v for k, v in (self.instance.settings or {}).items() if k == SCORES_SETTING}
            self.instance.settings = {
                **protocol.settings_json(self._numbers(protocol.key)),
                **given,
            }
        return cleaned

    def _numbers(self, kind: str) -> dict[str, float]:
        """The chosen kind's number settings that were given (the others keep defaults)."""
        numbers = {}
        for setting in PROTOCOLS[kind].number_settings:
            value = self.cleaned_data.get(setting_field_name(kind, setting.key))
            if value is not None:
                numbers[setting.key] = value
        return numbers


class PushAssignForm(forms.Form):
    task = forms.IntegerField(label=_("Task number"), min_value=1)
    username = forms.CharField(label=_("Annotator's username"), max_length=150)

    def clean_username(self) -> Any:
        name = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username=name).first()
        if user is None:
            raise forms.ValidationError(_("No such user: %(name)s"), params={"name": name})
        return user


class RosterAddForm(forms.Form):
    """Usernames of existing users to make annotators of a campaign, pasted as a list."""

    usernames = forms.CharField(
        label=_("Usernames"),
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=20_000,
        help_text=_("One or more, separated by commas, spaces or line breaks."),
    )


class InviteForm(forms.Form):
    label = forms.CharField(
        label=_("Label"),
        max_length=150,
        required=False,
        help_text=_("Who the links are for, e.g. a name or a group."),
    )
    count = forms.IntegerField(label=_("Number of links"), min_value=1, max_value=200, initial=1)
    days = forms.IntegerField(label=_("Valid for (days)"), min_value=1, max_value=365, initial=30)
