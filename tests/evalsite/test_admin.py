"""Django's admin covers every model of EvalSite, and each admin page renders for staff."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

OUR_APPS = ("annotation", "metrics")


def our_models() -> list[type]:
    return [model for label in OUR_APPS for model in apps.get_app_config(label).get_models()]


def test_every_model_is_registered_in_the_admin() -> None:
    missing = [m.__name__ for m in our_models() if not admin.site.is_registered(m)]
    assert missing == []


@pytest.mark.django_db
def test_every_admin_page_renders_for_staff_on_the_demo_campaign() -> None:
    call_command("load_demo", verbosity=0)
    staff = get_user_model().objects.create_superuser("root", "root@example.org", "pw-root-1234")
    client = Client()
    client.force_login(staff)
    opened = []
    for model in our_models():
        meta = model._meta
        base = f"admin:{meta.app_label}_{meta.model_name}"
        listing = client.get(reverse(f"{base}_changelist"))
        assert listing.status_code == 200, meta.label
        assert listing.context["cl"].result_count == model.objects.count(), meta.label
        add = client.get(reverse(f"{base}_add"))
        assert add.status_code in (200, 403), meta.label
        first = model.objects.order_by("pk").first()
        if first is not None:
            change = client.get(reverse(f"{base}_change", args=[first.pk]))
            assert change.status_code == 200, meta.label
            opened.append(meta.model_name)
    # The demo fills the campaign, its texts, tasks and judgments: those detail pages were opened.
    for name in ("campaign", "segment", "translation", "item", "judgment", "judgmentvalue"):
        assert name in opened
