"""Template filters that show the analysis' stored keys (QC verdicts, tests, score spaces,
normalisation bases) in words of the page's language: ``{% load analysis_labels %}`` then
``{{ a.qc_status|qc_status_label }}``, ``{{ test|method_label }}``. The stored results keep the
keys, so that they read the same in every language; an unknown key shows as it is."""

from __future__ import annotations

from django import template
from django.utils.translation import gettext_lazy as _

from annotation.analysis.forms import (
    BASIS_CHOICES,
    QC_TEST_CHOICES,
    SIGNIFICANCE_CHOICES,
    SPACE_CHOICES,
)

register = template.Library()

QC_STATUS_LABELS = {"passed": _("passed"), "failed": _("failed"), "untested": _("untested")}
# A test key means the same test as QC test or as significance test; the significance test's
# shorter names are used where both name one.
METHOD_LABELS = {**dict(QC_TEST_CHOICES), **dict(SIGNIFICANCE_CHOICES)}
METHOD_LABELS.update({"paired_t": _("paired t-test")})
SETTING_LABELS = {**dict(SPACE_CHOICES), **dict(BASIS_CHOICES)}


@register.filter
def qc_status_label(key: str) -> str:
    """``passed``, ``failed`` or ``untested`` in the page's language."""
    return str(QC_STATUS_LABELS.get(key, key))


@register.filter
def method_label(key: str) -> str:
    """A QC or significance test's key (``wilcoxon``, ``sign``, ``paired_t``, …) as its name."""
    return str(METHOD_LABELS.get(key, key))


@register.filter
def setting_label(key: str) -> str:
    """A score space (``z``, ``shifted``, ``raw``) or normalisation basis as its name."""
    return str(SETTING_LABELS.get(key, key))
