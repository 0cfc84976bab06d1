"""Serializers of the analysis API's query strings (settings and how annotators are named),
shared with the report and dashboard APIs."""

from __future__ import annotations

from dataclasses import replace

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.fields import empty

from annotation.analysis.settings import (
    BASES,
    PRESETS,
    QC_SPACES,
    QC_TESTS,
    RANK_SPACES,
    RESAMPLES_MAX,
    RESAMPLES_MIN,
    SIGNIFICANCE_TESTS,
    SPACES,
    TRUESKILL_RUNS_MAX,
    AnalysisSettings,
)

# How reports and downloads name annotators (``names``): pseudonyms, or usernames.
NAMES = ("pseudonyms", "real")


class NamesSerializer(serializers.Serializer):
    """``names`` from the query string: pseudonyms (A001, …, the default) or ``real``."""

    names = serializers.ChoiceField(choices=NAMES, default="pseudonyms")

    @property
    def real_names(self) -> bool:
        return self.validated_data["names"] == "real"


class OptionalBooleanField(serializers.BooleanField):
    """A boolean that a query string may leave out (DRF reads an absent box of form data as
    False): absent, it keeps the campaign's setting."""

    default_empty_html = empty


class SettingsFieldsSerializer(serializers.Serializer):
    """Analysis settings (all optional; see docs/reports.md): what is left out keeps the
    campaign's setting; ``preset`` sets a named set of conventions over them."""

    preset = serializers.ChoiceField(choices=list(PRESETS), required=False)
    qc_test = serializers.ChoiceField(choices=QC_TESTS, required=False)
    qc_space = serializers.ChoiceField(choices=QC_SPACES, required=False)
    ranking_qc_space = serializers.ChoiceField(choices=RANK_SPACES, required=False)
    threshold = serializers.FloatField(min_value=0.0001, max_value=0.5, required=False)
    basis = serializers.ChoiceField(choices=BASES, required=False)
    include_failed = OptionalBooleanField(required=False)
    exclude_untested = OptionalBooleanField(required=False)
    space = serializers.ChoiceField(choices=SPACES, required=False)
    test = serializers.ChoiceField(choices=SIGNIFICANCE_TESTS, required=False)
    alpha = serializers.FloatField(min_value=0.0001, max_value=0.5, required=False)
    confidence = serializers.FloatField(min_value=0.5, max_value=0.999, required=False)
    resamples = serializers.IntegerField(
        min_value=RESAMPLES_MIN,
        max_value=RESAMPLES_MAX,
        required=False,
        help_text="The campaign's one resample count (the metric analysis uses it too).",
    )
    trueskill_runs = serializers.IntegerField(
        min_value=0, max_value=TRUESKILL_RUNS_MAX, required=False
    )
    seed = serializers.IntegerField(
        min_value=0,
        max_value=2**32 - 1,
        required=False,
        help_text="The campaign's one seed (the metric analysis uses it too).",
    )

    def settings(self, base: AnalysisSettings) -> AnalysisSettings:
        """The settings asked for over ``base`` (the campaign's setting)."""
        data = {k: v for k, v in self.validated_data.items() if k not in ("names", "preset")}
        chosen = replace(base, **data)
        preset = self.validated_data.get("preset")
        return chosen.with_preset(preset) if preset else chosen


class SettingsSerializer(NamesSerializer, SettingsFieldsSerializer):
    """Analysis settings and how annotators are named, from the query string."""


SETTINGS_PARAMETERS = [
    OpenApiParameter(name, OpenApiTypes.STR, OpenApiParameter.QUERY, required=False)
    # get_fields(): the same names as ``fields``, typed as names (the stubs' ``fields`` iterates
    # fields)
    for name in SettingsSerializer().get_fields()
]
