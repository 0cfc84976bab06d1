"""The registered metrics' command-line options for ``manage.py evaluate``, built from their
declarations (:mod:`evalcore.scoring.spec`): sacreBLEU's options under sacreBLEU's own flag
names and meanings — a user who knows ``sacrebleu -lc --chrf-word-order 2`` types the same here
and gets the same numbers — and the others as ``--<name>``."""

from __future__ import annotations

from argparse import ArgumentParser
from collections.abc import Mapping
from typing import Any

from evalcore.scoring import METRICS, MetricOptions, Option, registered_options


def add_metric_options(parser: ArgumentParser) -> None:
    """One group of options per metric that declares options no metric before it takes
    (BLEU's group holds the tokenizer and case that Length and the word metrics take too), and
    sacreBLEU's ``-f``."""
    seen: set[str] = set()
    for spec in METRICS.values():
        options = [option for option in spec.options if option.name not in seen]
        if not options:
            continue
        seen.update(option.name for option in options)
        sacrebleus = all(option.flags for option in options)
        group = parser.add_argument_group(
            f"{spec.label} (as sacreBLEU's)" if sacrebleus else spec.label
        )
        for option in options:
            group.add_argument(*option.command_line_flags, **_argument(option))
    parser.add_argument(
        "-f",
        "--format",
        choices=["text", "json"],
        default="text",
        help="text: MultEval's table and the signatures; json: the results as JSON",
    )


def _argument(option: Option) -> dict[str, Any]:
    """argparse's keywords for ``option``: a switch for a bool (off by default), else a value
    of its type, held to its choices unless the option checks its values itself."""
    argument: dict[str, Any] = {"dest": option.name, "help": option.help or None}
    if option.value_type is bool:
        return {**argument, "action": "store_true"}
    argument.update(type=option.value_type, default=option.default)
    if option.choices and option.problem is None:
        argument["choices"] = option.choices
    return argument


def metric_options_given(arguments: Mapping[str, Any]) -> MetricOptions:
    """The metric options the parsed arguments ask for."""
    return MetricOptions(**{option.name: arguments[option.name] for option in registered_options()})


def metric_option_problem(arguments: Mapping[str, Any]) -> str | None:
    """Why an option's value given cannot be used here (an unknown tokenizer, a SentencePiece
    tokenizer without its model file), or None."""
    for option in registered_options():
        if option.problem is not None and (problem := option.problem(arguments[option.name])):
            return problem
    return None
