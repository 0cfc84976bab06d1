"""What a file's layout says about how it is imported: a layout that holds one kind's judgments
(Google's MQM TSV, Appraise's error-span export) sets the protocol, and may work out the values
that depend on it. Each such layout registers a hook here, beside its parser."""

from __future__ import annotations

from collections.abc import Callable

from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.rows import ParsedJudgments

# format → hook(parsed, options) → (the options, the parsed file) as the import uses them.
OptionHook = Callable[[ParsedJudgments, ImportOptions], tuple[ImportOptions, ParsedJudgments]]
OPTION_HOOKS: dict[str, OptionHook] = {}


def options_for(
    parsed: ParsedJudgments, options: ImportOptions
) -> tuple[ImportOptions, ParsedJudgments]:
    """The options and rows as the file's layout has them imported (unchanged for a layout
    without a hook)."""
    hook = OPTION_HOOKS.get(parsed.file_format)
    return hook(parsed, options) if hook is not None else (options, parsed)
