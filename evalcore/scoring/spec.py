"""How a metric and its options are declared, once each.

A metric module declares its options as :class:`Option` objects (a module that several metrics
share declares theirs: ``tokenize`` and ``lowercase`` in :mod:`.sacre`) and itself as a
:class:`MetricSpec` named ``SPEC``; the registry (:mod:`.registry`) lists the specs. The metric
names, :func:`~.registry.make_metric`, :class:`~.registry.MetricOptions`, the settings form's
fields, the analysis parameters and the command line's flags all read these declarations.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .base import Metric

VALUE_TYPES: tuple[type[Any], ...] = (bool, int, float, str)


def gettext_noop(text: str) -> str:
    """``text`` as it is: marks a label for the translation catalogue (``makemessages`` finds
    it by this name); the web app translates it where it shows it. The core imports no Django."""
    return text


class Source(enum.Enum):
    """Where a campaign's background analysis takes an option's value from."""

    SETTING = "setting"
    """The campaign's metric settings (a ``MetricSettings`` column, a field of the settings
    form), stored in the analysis parameters under the option's name."""
    SACREBLEU_SETTING = "sacrebleu_setting"
    """As ``SETTING``, but stored in the parameters' ``sacrebleu`` group, and only when it
    differs from its default: the parameters (so the freshness of stored results) of campaigns
    that keep sacreBLEU's defaults are what they were before these options existed."""
    FOLLOWS = "follows"
    """The setting of another option (:attr:`Option.follows`): the campaign's one lowercase
    switch lowercases chrF too."""
    TARGET_LANGUAGE = "target_language"
    """The campaign's target language, its primary subtag (``de`` for ``de-AT``)."""
    COMMAND_LINE = "command_line"
    """The command line only; a campaign's analysis keeps the default."""


CAMPAIGN_SETTINGS = (Source.SETTING, Source.SACREBLEU_SETTING)
"""The sources that are a column of the campaign's metric settings and a field of its form."""


@dataclass(frozen=True)
class Option:
    """One option of one or more metrics."""

    name: str
    """Its key everywhere: :class:`~.registry.MetricOptions`, the metric settings' column and
    form field, the analysis parameters, the command line's destination."""
    value_type: type[Any]
    """``bool``, ``int``, ``float`` or ``str``."""
    default: Any
    label: str
    """The settings form's label (English; the web app translates it)."""
    keyword: str = ""
    """The metric classes' keyword argument that takes it; the name when empty."""
    help: str = ""
    """The command line's help."""
    flags: tuple[str, ...] = ()
    """sacreBLEU's command-line flags for it; an option sacreBLEU lacks is ``--<name>``."""
    signature: str | None = None
    """The signature key that shows its value; None when the value shows elsewhere (chrF's β
    in the score's name) or only beside another option (BLEU's smoothing value)."""
    choices: tuple[Any, ...] = ()
    """The values the settings form offers and the command line accepts; empty: any value of
    its type."""
    problem: Callable[[Any], str | None] | None = None
    """Why a value cannot be used here, or None; the command line asks it instead of holding
    the value to :attr:`choices` (a SentencePiece tokenizer works where its model is present)."""
    nullable: bool = False
    """None is a value (the default "unset" of BLEU's smoothing value)."""
    source: Source = Source.COMMAND_LINE
    follows: str = ""
    """With :attr:`Source.FOLLOWS`: the option whose setting this one takes."""

    def __post_init__(self) -> None:
        if self.value_type not in VALUE_TYPES:
            raise TypeError(f"option {self.name}: a value is one of {VALUE_TYPES}")
        if not (self.default is None and self.nullable) and not self.accepts(self.default):
            raise TypeError(f"option {self.name}: default {self.default!r} is no {self.value_type}")
        if (self.source is Source.FOLLOWS) != bool(self.follows):
            raise ValueError(
                f"option {self.name}: follows another option exactly when its source is FOLLOWS"
            )
        if self.value_type is bool and self.default:
            raise ValueError(f"option {self.name}: a switch is off by default (a flag turns it on)")
        if self.choices and self.default not in self.choices:
            raise ValueError(f"option {self.name}: its default is not one of its choices")

    def accepts(self, value: Any) -> bool:
        """Whether ``value`` is of this option's type (an int is no bool, a bool no int)."""
        if value is None:
            return self.nullable
        if self.value_type is float:
            return type(value) in (int, float)
        return type(value) is self.value_type

    @property
    def argument(self) -> str:
        """The metric classes' keyword argument for it."""
        return self.keyword or self.name

    @property
    def command_line_flags(self) -> tuple[str, ...]:
        """sacreBLEU's flags, or ``--<name>`` with dashes."""
        return self.flags or ("--" + self.name.replace("_", "-"),)

    @property
    def campaign_setting(self) -> bool:
        """Whether a campaign sets it in its metric settings (a column and a form field)."""
        return self.source in CAMPAIGN_SETTINGS


class OptionValues:
    """Values of options by name; an option without one has its default."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self._values = dict(values)

    def __getitem__(self, option: Option) -> Any:
        return self._values.get(option.name, option.default)

    def __repr__(self) -> str:
        given = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"{type(self).__name__}({given})"


@dataclass(frozen=True)
class MetricSpec:
    """A metric as the registry knows it: its class, the options it takes, and whether the
    command line computes it when asked for no metric by name."""

    metric: type[Metric]
    options: tuple[Option, ...] = ()
    on_command_line: bool = False

    @property
    def name(self) -> str:
        """The registry key (``bleu``)."""
        return self.metric.name

    @property
    def label(self) -> str:
        """The metric's name in tables and headings (``BLEU``)."""
        return self.metric.display_name

    def build(self, values: OptionValues) -> Metric:
        """The metric with ``values`` of its options."""
        factory: Callable[..., Metric] = self.metric
        return factory(**{option.argument: values[option] for option in self.options})
