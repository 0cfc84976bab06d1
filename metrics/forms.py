"""Forms of the metrics app."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django import forms
from django.db import transaction
from django.utils.translation import gettext_lazy as _

from annotation.analysis.selectors import campaign_analysis_settings
from annotation.analysis.services import campaign_analysis_settings_save
from annotation.analysis.settings import RESAMPLES_MAX, RESAMPLES_MIN
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
    # The campaign's one resample count and seed, which the human analysis uses too: they live
    # in the campaign's analysis settings, not in MetricSettings.
    resamples = forms.IntegerField(
        label=_("Bootstrap resamples"),
        min_value=RESAMPLES_MIN,
        max_value=RESAMPLES_MAX,
        help_text=_("The campaign's one count: the human analysis uses it too."),
        error_messages={
            "min_value": _("Choose between 10 and 100,000 resamples."),
            "max_value": _("Choose between 10 and 100,000 resamples."),
        },
    )
    seed = forms.IntegerField(
        label=_("Seed"),
        min_value=0,
        max_value=2**32 - 1,
        help_text=_("The campaign's one seed: the human analysis uses it too."),
    )

    class Meta:
        model = MetricSettings
        fields = [
            "metrics",
            "baseline",
            *(option.name for option in _SETTINGS),
            "ar_trials",
        ]
        labels = {
            "baseline": _("Baseline system"),
            **{option.name: _(option.label) for option in _SETTINGS},
            "ar_trials": _("Approximate-randomisation trials"),
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The registry as it is now, a metric registered after this module's import included.
        metrics = self.fields["metrics"]
        assert isinstance(metrics, forms.MultipleChoiceField)
        metrics.choices = [(name, name) for name in metric_names()]
        self.analysis_settings = campaign_analysis_settings(campaign=self.instance.campaign)
        self.fields["resamples"].initial = self.analysis_settings.resamples
        self.fields["seed"].initial = self.analysis_settings.seed
        baseline = self.fields["baseline"]
        assert isinstance(baseline, forms.ModelChoiceField)
        baseline.queryset = System.objects.filter(campaign_id=self.instance.campaign_id).order_by(
            "name"
        )
        baseline.empty_label = _("(the first system by name)")
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
        cleaned = super().clean() or {}
        for option in _SETTINGS:
            if option.source is Source.SACREBLEU_SETTING and cleaned.get(option.name) in (None, ""):
                cleaned[option.name] = option.default
        return cleaned

    def clean_ar_trials(self) -> int:
        value = self.cleaned_data["ar_trials"]
        if not 10 <= value <= 1_000_000:
            raise forms.ValidationError(_("Choose between 10 and 1,000,000 trials."))
        return int(value)

    def save(self, commit: bool = True) -> MetricSettings:
        """The metric settings, and the campaign's resample count and seed in its analysis
        settings (a change there schedules the recomputation of the stored results)."""
        if not commit:
            raise ValueError("the campaign's resample count and seed are saved with commit")
        with transaction.atomic():
            instance: MetricSettings = super().save(commit=True)
            campaign_analysis_settings_save(
                campaign=self.instance.campaign,
                settings=replace(
                    self.analysis_settings,
                    resamples=self.cleaned_data["resamples"],
                    seed=self.cleaned_data["seed"],
                ),
            )
        return instance
