"""Template filters that show the analysis' stored keys (QC verdicts, tests, score spaces,
normalisation bases) in words of the page's language: ``{% load analysis_labels %}`` then
``{{ a.qc_status|qc_status_label }}``, ``{{ test|method_label }}``. The stored results keep the
keys, so that they read the same in every language; an unknown key shows as it is."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.translation import gettext_lazy as _

from annotation.analysis.families.base import AnalysisFamily
from annotation.analysis.families.registry import family_of_result
from annotation.analysis.forms import (
    BASIS_CHOICES,
    QC_TEST_CHOICES,
    SIGNIFICANCE_CHOICES,
    SPACE_CHOICES,
)
from annotation.protocols.registry import PROTOCOLS, criterion_label_shown

register = template.Library()

QC_STATUS_LABELS = {"passed": _("passed"), "failed": _("failed"), "untested": _("untested")}
# A test key means the same test as QC test or as significance test; the significance test's
# shorter names are used where both name one.
METHOD_LABELS = {**dict(QC_TEST_CHOICES), **dict(SIGNIFICANCE_CHOICES)}
METHOD_LABELS.update({"paired_t": _("paired t-test")})
SETTING_LABELS = {**dict(SPACE_CHOICES), **dict(BASIS_CHOICES)}
# The agreement coefficients and their counts, as the stored results name them.
AGREEMENT_LABELS = {
    "inter-annotator α (interval)": _("inter-annotator α (interval)"),
    "inter-annotator α (ordinal)": _("inter-annotator α (ordinal)"),
    "intra-annotator α (interval, repeats)": _("intra-annotator α (interval, repeats)"),
    "inter-annotator κ": _("inter-annotator κ"),
    "intra-annotator κ (repeats)": _("intra-annotator κ (repeats)"),
}
AGREEMENT_COUNT_LABELS = {
    "units": _("units"),
    "values": _("values"),
    "pairs": _("pairs"),
    "agreements": _("agreements"),
    "comparisons": _("comparisons"),
}


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


@register.filter
def criterion_label(criterion: Any) -> str:
    """A stored criterion's label in the page's language (by its protocol and key)."""
    return criterion_label_shown(criterion.protocol, criterion.criterion, criterion.criterion_label)


@register.filter
def kind_name(key: str) -> str:
    """A protocol kind's key (``esa``) as the kind's name in words (``ESA``)."""
    kind = PROTOCOLS.get(key)
    return key if kind is None else str(kind.short_name or kind.name)


@register.filter
def agreement_label(name: str) -> str:
    """An agreement coefficient's stored name (``inter-annotator κ``) in the page's language."""
    return str(AGREEMENT_LABELS.get(name, name))


@register.filter
def agreement_count_label(key: str) -> str:
    """What an agreement coefficient counted (``units``, ``pairs``, …) in the page's language."""
    return str(AGREEMENT_COUNT_LABELS.get(key, key))


@register.filter
def analysis_family(criterion: Any) -> AnalysisFamily:
    """The analysis family of a criterion's result (anything with its ``kind``): its template
    parts render the family's columns (``{% with family=c|analysis_family %}``)."""
    return family_of_result(criterion)
