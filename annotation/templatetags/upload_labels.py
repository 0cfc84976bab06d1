"""The upload forms' names in the page's language: ``{% load upload_labels %}`` then
``{{ upload.form|upload_form_label }}``. An upload stores its form's key; the labels come from
the forms' list (annotation/campaigns/parse.py); an unknown key shows as it is."""

from __future__ import annotations

from django import template

from annotation.campaigns.parse import upload_format_label

register = template.Library()


@register.filter
def upload_form_label(key: str) -> str:
    return upload_format_label(key)
