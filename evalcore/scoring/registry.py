"""The registry of metrics: one line per metric (:data:`BUILT_IN`), from which the metric names,
:func:`make_metric`, :class:`MetricOptions`, the settings form's fields, the analysis
parameters and the command line's flags are derived.

A metric is one module of this package that declares its class, its options and a
:class:`~.spec.MetricSpec` named ``SPEC``; :func:`register` adds a spec from elsewhere (a test's).
"""

from __future__ import annotations

from typing import Any

from . import (
    bertr,
    bleu,
    chrf,
    chrf_plus,
    fmeasure,
    lemma,
    length,
    per,
    precision,
    recall,
    ter,
    wer,
)
from .base import Metric
from .spec import MetricSpec, Option, OptionValues

# The metrics, in the order forms, tables and the command line list them.
BUILT_IN: tuple[MetricSpec, ...] = (
    bleu.SPEC,
    chrf.SPEC,
    chrf_plus.SPEC,
    ter.SPEC,
    length.SPEC,
    wer.SPEC,
    per.SPEC,
    precision.SPEC,
    recall.SPEC,
    fmeasure.SPEC,
    lemma.SPEC,
    bertr.SPEC,
)

METRIC_NAMES: tuple[str, ...] = tuple(spec.name for spec in BUILT_IN)
"""The built-in metrics' names, in order (every one a new campaign's default)."""

METRICS: dict[str, MetricSpec] = {}
"""Every registered metric by name: the built-in ones, and any that :func:`register` added."""


def register(spec: MetricSpec) -> MetricSpec:
    """Add a metric under its name; a name is registered once, and an option that several
    metrics take is the same declaration in each."""
    if spec.name in METRICS:
        raise ValueError(f"a metric {spec.name!r} is registered already")
    known = {option.name: option for option in registered_options()}
    for option in spec.options:
        if known.get(option.name, option) != option:
            raise ValueError(f"metric {spec.name!r} declares option {option.name!r} anew")
    METRICS[spec.name] = spec
    return spec


def metric_names() -> tuple[str, ...]:
    """The registered metrics' names, in order."""
    return tuple(METRICS)


def registered_options() -> tuple[Option, ...]:
    """Every registered metric's options, each once, in the order of the metrics that take
    them first."""
    options: dict[str, Option] = {}
    for spec in METRICS.values():
        for option in spec.options:
            options.setdefault(option.name, option)
    return tuple(options.values())


class MetricOptions(OptionValues):
    """Values of the registered metrics' options by name (``MetricOptions(tokenize="intl",
    chrf_beta=1)``); an option not given has its default. Each metric takes the ones it knows.
    A name no registered metric takes raises TypeError, so that a misspelt option cannot leave
    a score at its default unnoticed."""

    def __init__(self, **values: Any) -> None:
        options = {option.name: option for option in registered_options()}
        unknown = sorted(set(values) - set(options))
        if unknown:
            raise TypeError(
                f"unknown metric option {', '.join(unknown)}; the options are {', '.join(options)}"
            )
        for name, value in values.items():
            if not options[name].accepts(value):
                raise TypeError(f"metric option {name}={value!r} is no {options[name].value_type}")
        super().__init__(values)


def make_metric(name: str, options: OptionValues | None = None) -> Metric:
    """Build the registered metric called ``name`` with ``options``.

    Raises ValueError for an unknown name and MetricUnavailableError when the metric's optional
    dependencies are missing (BERTR without the ``neural`` extra).
    """
    spec = METRICS.get(name)
    if spec is None:
        raise ValueError(f"unknown metric {name!r}; choose from {', '.join(METRICS)}")
    return spec.build(options or MetricOptions())


for _spec in BUILT_IN:
    register(_spec)
