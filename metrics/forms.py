"""Forms of the metrics app."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.models import System
from evalcore.scoring import METRIC_NAMES, Source, metric_names, registered_options
from evalcore.scoring.sacre import TOKENIZE
from metrics.models import MetricSettings

__all__ = ["METRIC_NAMES", "TOKENIZERS", "MetricSettingsForm"]

TOKENIZERS = list(TOKENIZE.choices)
# The metric options a campaign sets, each a column of its metric settings and a field here.
_SETTINGS = tuple(option for option in registered_options() if option.campaign_setting)


class MetricSettingsForm(forms.ModelForm):
    metrics = forms.MultipleChoiceField(label=_("Metrics"), widget=forms.CheckboxSelectMultiple)

    class Meta:
        model = MetricSettings
        fields = [
            "metrics",
            "baseline",
            *(option.name for option in _SETTINGS),
            "bootstrap_samples",
            "ar_trials",
            "seed",
        ]
        labels = {
            "baseline": _("Baseline system"),
            **{option.name: _(option.label) for option in _SETTINGS},
            "bootstrap_samples": _("Bootstrap resamples"),
            "ar_trials": _("Approximate-randomisation trials"),
            "seed": _("Seed"),
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The registry as it is now, a metric registered after this module's import included.
        self.fields["metrics"].choices = [(name, name) for name in metric_names()]
        self.fields["baseline"].queryset = System.objects.filter(
            campaign_id=self.instance.campaign_id
        ).order_by("name")
        self.fields["baseline"].empty_label = _("(the first system by name)")
        for option in _SETTINGS:
            field = self.fields[option.name]
            if option.choices:
                self.fields[option.name] = field = forms.ChoiceField(
                    label=field.label, choices=[(c, c) for c in option.choices]
                )
            # sacreBLEU's options may be left out (a form or script from before they existed):
            # what is left out keeps sacreBLEU's default.
            if option.source is Source.SACREBLEU_SETTING:
                field.required = False

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        for option in _SETTINGS:
            if option.source is Source.SACREBLEU_SETTING and cleaned.get(option.name) in (None, ""):
                cleaned[option.name] = option.default
        return cleaned

    def clean_bootstrap_samples(self) -> int:
        value = self.cleaned_data["bootstrap_samples"]
        if not 10 <= value <= 100_000:
            raise forms.ValidationError(_("Choose between 10 and 100,000 resamples."))
        return int(value)

    def clean_ar_trials(self) -> int:
        value = self.cleaned_data["ar_trials"]
        if not 10 <= value <= 1_000_000:
            raise forms.ValidationError(_("Choose between 10 and 1,000,000 trials."))
        return int(value)
