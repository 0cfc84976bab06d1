"""The registry of metrics: every metric is one module with its ``SPEC``, every option is declared
once and reaches the metric's class under its keyword, and the signature key an option names
shows its value."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest

from evalcore.scoring import (
    METRIC_NAMES,
    METRICS,
    MetricOptions,
    MetricSpec,
    Option,
    make_metric,
    metric_names,
    register,
    registered_options,
)
from evalcore.scoring.registry import BUILT_IN

# A value other than the default for options whose type and choices do not give one.
EXAMPLES: dict[str, Any] = {"lang": "de", "smooth_value": 0.5}


def example(option: Option) -> Any:
    """A value of ``option`` that is not its default."""
    if option.name in EXAMPLES:
        return EXAMPLES[option.name]
    if option.value_type is bool:
        return True
    if option.choices:
        return next(c for c in option.choices if c != option.default)
    if option.value_type is int:
        return option.default + 1
    raise AssertionError(f"give option {option.name} a value in EXAMPLES")


def test_the_names_are_the_registrys_in_its_order() -> None:
    assert METRIC_NAMES == tuple(spec.name for spec in BUILT_IN) == metric_names()
    assert METRIC_NAMES[:4] == ("bleu", "chrf", "chrf++", "ter")


@pytest.mark.parametrize("spec", BUILT_IN, ids=lambda spec: spec.name)
def test_every_metric_is_one_module_with_its_spec(spec: MetricSpec) -> None:
    module = importlib.import_module(spec.metric.__module__)
    assert module.SPEC is spec
    assert module.__name__.startswith("evalcore.scoring.")


def test_an_option_is_one_declaration_wherever_metrics_share_it() -> None:
    by_name: dict[str, Option] = {}
    for spec in METRICS.values():
        for option in spec.options:
            assert by_name.setdefault(option.name, option) is option
    assert tuple(by_name.values()) == registered_options()


@pytest.mark.parametrize(
    ("spec", "option"),
    [(spec, option) for spec in BUILT_IN for option in spec.options],
    ids=lambda value: value.name,
)
def test_every_option_reaches_its_metric_and_its_signature(
    spec: MetricSpec, option: Option
) -> None:
    value = example(option)
    default = make_metric(spec.name)
    changed = make_metric(spec.name, MetricOptions(**{option.name: value}))
    if option.default is not None:  # BLEU keeps an unset smoothing value as the method's
        assert getattr(default, option.argument) == option.default
    assert getattr(changed, option.argument) == value
    if option.signature is not None:
        before = default.signature(1).as_dict()[option.signature]
        after = changed.signature(1).as_dict()[option.signature]
        assert before != after, (option.name, before)


def test_a_misspelt_or_mistyped_option_is_refused() -> None:
    with pytest.raises(TypeError, match="unknown metric option chrf_betta"):
        MetricOptions(chrf_betta=1)
    with pytest.raises(TypeError, match="chrf_beta"):
        MetricOptions(chrf_beta="1")
    with pytest.raises(TypeError, match="lowercase"):
        MetricOptions(lowercase=1)
    assert make_metric("bleu", MetricOptions(smooth_value=2)).smooth_value == 2.0


def test_a_name_and_an_option_are_registered_once() -> None:
    with pytest.raises(ValueError, match="registered already"):
        register(METRICS["bleu"])
    other = Option("tokenize", str, "intl", label="Tokenizer")
    spec = MetricSpec(type("Other", (METRICS["wer"].metric,), {"name": "other"}), (other,))
    with pytest.raises(ValueError, match="declares option 'tokenize' anew"):
        register(spec)
    assert "other" not in METRICS


def test_an_option_declaration_is_checked() -> None:
    with pytest.raises(TypeError, match="default"):
        Option("n", int, "6", label="n")
    with pytest.raises(ValueError, match="off by default"):
        Option("on", bool, True, label="on")
    with pytest.raises(ValueError, match="choices"):
        Option("tok", str, "13a", label="tok", choices=("intl",))


def test_no_module_outside_the_metrics_asks_which_metric_it_is() -> None:
    """Outside the metrics' own modules nothing compares a metric's name with a registered
    one (``== "bleu"``, ``in ("ter", "wer")``, ``case "bertr"``) to decide what to do: a metric
    says what differs about it through its class and its spec."""
    root = Path(__file__).resolve().parents[3]
    names = "|".join(re.escape(n) for n in sorted(METRIC_NAMES, key=len, reverse=True))
    quoted = rf"[\"']({names})[\"']"
    pattern = re.compile(
        rf"(==|!=)\s*{quoted}|{quoted}\s*(==|!=)|\bin\s*[(\[{{]\s*{quoted}|\bcase\s+{quoted}"
    )
    assert pattern.search('if name == "bleu":')
    assert pattern.search("{% if metric.key == 'chrf++' %}")
    assert pattern.search('if name in ("ter", "wer"):')
    assert not pattern.search('default = {"bleu": 1}')
    found = []
    for folder in ("evalcore", "metrics", "annotation", "evalsite", "templates", "static"):
        for path in (root / folder).rglob("*"):
            if path.suffix not in {".py", ".html", ".js"}:
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if pattern.search(line):
                    found.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    assert found == []
