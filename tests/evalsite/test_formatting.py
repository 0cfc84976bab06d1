"""The one number formatter: every page writes a value with the digits Django's ``floatformat``
gives it (the reference here), whichever page or presenter writes it."""

from __future__ import annotations

import random

from django.template import Context, Template
from django.template.defaultfilters import floatformat
from django.utils import translation

from annotation.reports.systems import latex_fixed
from evalsite.formatting import number_text


def test_numbers_round_as_floatformat_does_ties_included() -> None:
    rng = random.Random(7)
    values = [round(rng.uniform(-500, 500), rng.randint(0, 6)) for _ in range(20_000)]
    values += [4.125, -4.125, 2.675, 0.125, 0.5, 1.5, 2.5, -2.5, -0.02, -0.0, 1e-7, 123456.5]
    for value in values:
        for digits in range(5):
            assert number_text(value, digits) == floatformat(value, digits), (value, digits)


def test_a_mean_of_4_125_shows_as_4_13_not_binary_rounding_s_4_12() -> None:
    assert f"{4.125:.2f}" == "4.12"  # what formatting the binary value alone gives
    assert number_text(4.125, 2) == "4.13"
    assert number_text(None, 2) == "—"


def test_templates_use_the_same_formatter_in_the_active_language() -> None:
    template = Template("{% load numbers %}{{ a|number:2 }} {{ b|number:3 }} {{ c|number:1 }}")
    context = Context({"a": 4.125, "b": None, "c": -0.02})
    assert template.render(context) == "4.13 — 0.0"
    with translation.override("de"):
        assert template.render(context) == "4,13 — 0,0"
        assert number_text(4.125, 2) == floatformat(4.125, 2) == "4,13"


def test_the_latex_system_report_rounds_as_the_pages_do() -> None:
    assert latex_fixed(4.125, 2) == number_text(4.125, 2) == "4.13"
    assert latex_fixed(-0.0004, 3) == "0.000"
    assert latex_fixed(None) == "--"


def test_counts_group_thousands_as_django_s_intcomma_does_in_each_language() -> None:
    from django.contrib.humanize.templatetags.humanize import intcomma

    from evalsite.formatting import count_text

    page = Template("{% load numbers %}{{ n|count }}")
    for language, expected in (("en", "12,345"), ("de", "12.345")):
        with translation.override(language):
            assert count_text(12345) == expected
            assert page.render(Context({"n": 12345})) == expected
            for value in (0, 7, 999, 1000, 2160, 1_000_000, 123_456_789):
                assert count_text(value) == intcomma(value), (language, value)
    assert count_text(None) == "—"
