"""The form of the page that builds a campaign from a release of judgments."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.campaigns.forms import MultipleFileField, NamedFileField


class ReleaseForm(forms.Form):
    """A release whose file carries its texts (or names the files that do), and the new
    campaign's name and languages."""

    campaign_name = forms.CharField(label=_("Campaign name"), max_length=200)
    # An empty file is refused by the import, naming it.
    file = NamedFileField(
        label=_("Judgments file"),
        allow_empty_file=True,
        help_text=_("Google's MQM TSV (any of Google's releases); its format is detected."),
    )
    batches = MultipleFileField(
        label=_("Files with the texts"),
        required=False,
        help_text=_("Only for a release whose judgments file does not carry the texts."),
    )
    source_language = forms.CharField(
        label=_("Source language"),
        max_length=35,
        required=False,
        help_text=_("BCP-47, e.g. en. Default: the file's, else “und”; editable later."),
    )
    target_language = forms.CharField(label=_("Target language"), max_length=35, required=False)
