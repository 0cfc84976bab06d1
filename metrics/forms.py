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
from evalcore.scoring import METRIC_NAMES
from metrics.models import MetricSettings
from metrics.pipeline import SACREBLEU_FIELDS

TOKENIZERS = ["13a", "intl", "zh", "char", "none", "ja-mecab", "ko-mecab"]
# sacreBLEU's options that a form may leave out (the booleans left out are False anyway).
_DEFAULTED = ("smooth_method", "chrf_char_order", "chrf_word_order", "chrf_beta")


class MetricSettingsForm(forms.ModelForm):
    metrics = forms.MultipleChoiceField(
        label=_("Metrics"),
        choices=[(name, name) for name in METRIC_NAMES],
        widget=forms.CheckboxSelectMultiple,
    )
    tokenize = forms.ChoiceField(label=_("Tokenizer"), choices=[(t, t) for t in TOKENIZERS])
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
            "tokenize",
            "lowercase",
            *SACREBLEU_FIELDS,
            "ar_trials",
        ]
        labels = {
            "baseline": _("Baseline system"),
            "lowercase": _("Lowercase (BLEU, chrF, Length, word metrics)"),
            "smooth_method": _("BLEU smoothing"),
            "smooth_value": _("BLEU smoothing value (floor, add-k)"),
            "chrf_char_order": _("chrF character n-gram order"),
            "chrf_word_order": _("chrF word n-gram order (2: chrF++)"),
            "chrf_beta": _("chrF β"),
            "chrf_whitespace": _("chrF keeps whitespace"),
            "ter_case_sensitive": _("TER case-sensitive"),
            "ter_no_punct": _("TER without punctuation"),
            "ter_normalized": _("TER normalised"),
            "ter_asian_support": _("TER Asian support"),
            "ar_trials": _("Approximate-randomisation trials"),
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.analysis_settings = campaign_analysis_settings(campaign=self.instance.campaign)
        self.fields["resamples"].initial = self.analysis_settings.resamples
        self.fields["seed"].initial = self.analysis_settings.seed
        self.fields["baseline"].queryset = System.objects.filter(
            campaign_id=self.instance.campaign_id
        ).order_by("name")
        self.fields["baseline"].empty_label = _("(the first system by name)")
        # sacreBLEU's options may be left out (a form or script from before they existed):
        # what is left out keeps sacreBLEU's default.
        for name in _DEFAULTED:
            self.fields[name].required = False

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        for name in _DEFAULTED:
            if cleaned.get(name) in (None, ""):
                cleaned[name] = MetricSettings._meta.get_field(name).get_default()
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
