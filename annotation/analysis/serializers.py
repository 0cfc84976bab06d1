"""Serializers of the analysis API's query strings that other APIs share."""

from __future__ import annotations

from rest_framework import serializers

# How reports and downloads name annotators (``names``): pseudonyms, or usernames.
NAMES = ("pseudonyms", "real")


class NamesSerializer(serializers.Serializer):
    """``names`` from the query string: pseudonyms (A001, …, the default) or ``real``."""

    names = serializers.ChoiceField(choices=NAMES, default="pseudonyms")

    @property
    def real_names(self) -> bool:
        return self.validated_data["names"] == "real"
