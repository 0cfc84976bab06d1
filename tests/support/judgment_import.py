"""Row counts of every annotation model (and users), to compare around a failed judgment import.
The import's own record (a :class:`JudgmentImportJob`, kept to show how it ended) is left out."""

from __future__ import annotations

from django.apps import apps
from django.contrib.auth import get_user_model


def database_snapshot() -> dict[str, int]:
    counts = {
        model.__name__: model.objects.count()
        for model in apps.get_app_config("annotation").get_models()
        if model.__name__ != "JudgmentImportJob"
    }
    counts["User"] = get_user_model().objects.count()
    return counts
