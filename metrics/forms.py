"""Forms of the metrics app."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

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

    class Meta:
        model = MetricSettings
        fields = [
            "metrics",
            "baseline",
            "tokenize",
            "lowercase",
            *SACREBLEU_FIELDS,
            "bootstrap_samples",
            "ar_trials",
            "seed",
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
            "bootstrap_samples": _("Bootstrap resamples"),
            "ar_trials": _("Approximate-randomisation trials"),
            "seed": _("Seed"),
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
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
