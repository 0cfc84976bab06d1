"""``manage.py evaluate``: MultEval-style scores, s_sel, s_opt and p-values from plain files.

Needs no database. Example::

    python manage.py evaluate --refs ref.1 ref.2 \\
        --system baseline base.run1 base.run2 base.run3 \\
        --system tuned tuned.run1 tuned.run2 tuned.run3 \\
        --baseline baseline --metrics bleu chrf ter length --json scores.json --latex table.tex
"""

from __future__ import annotations

import json
import sys
from argparse import ArgumentParser
from pathlib import Path
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evalcore.scoring import METRICS, MetricUnavailableError, metric_names
from evalcore.scoring.evaluation import (
    evaluate_outputs,
    format_latex_table,
    format_multeval_table,
    report_json,
)
from metrics.sacrebleu_cli import (
    add_metric_options,
    metric_option_problem,
    metric_options_given,
)

EXIT_BAD_INPUT = 2


def read_lines(path: str) -> list[str]:
    """One segment per line, UTF-8, read as sacreBLEU's command line reads its files: a line
    ends at ``\\n`` only (a carriage return elsewhere is part of its line), trailing whitespace
    is stripped, and a final newline does not make an extra empty segment."""
    try:
        # newline="\n": no universal newlines, which would end a line at a lone "\r" too.
        with open(path, encoding="utf-8", newline="\n") as handle:
            return [line.rstrip() for line in handle]
    except FileNotFoundError:
        raise CommandError(f"file not found: {path}", returncode=EXIT_BAD_INPUT) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"cannot read {path}: {exc}", returncode=EXIT_BAD_INPUT) from None


class Command(BaseCommand):
    help = (
        "Score systems (several runs each) against references with sacreBLEU-exact metrics and "
        "print a MultEval table: mean (s_sel/s_opt/p) per metric, p from stratified approximate "
        "randomisation against the baseline."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)

        def one_line_error(message: str) -> NoReturn:
            # argparse would print the whole usage first; one line says more.
            if parser.called_from_command_line:
                sys.stderr.write(f"{parser.prog}: error: {message} (see --help)\n")
                sys.exit(EXIT_BAD_INPUT)
            raise CommandError(f"Error: {message}", returncode=EXIT_BAD_INPUT)

        parser.error = one_line_error  # type: ignore[method-assign]
        return parser

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--refs",
            nargs="+",
            required=True,
            metavar="REF",
            help="reference files, one segment per line",
        )
        parser.add_argument(
            "--system",
            nargs="+",
            action="append",
            required=True,
            metavar=("NAME", "FILE"),
            help="a system's name and its run files (repeat for each system)",
        )
        parser.add_argument(
            "--baseline",
            metavar="NAME",
            help="system the others are tested against (default: the first)",
        )
        parser.add_argument(
            "--metrics",
            nargs="+",
            default=[spec.name for spec in METRICS.values() if spec.on_command_line],
            metavar="METRIC",
            help=f"any of: {' '.join(metric_names())}",
        )
        add_metric_options(parser)
        # One name each, as a campaign's settings name them; sacreBLEU's flags are aliases.
        parser.add_argument(
            "--resamples",
            "--paired-bs-n",
            "-pbsn",
            "--confidence-n",
            "-cin",
            dest="resamples",
            type=int,
            default=1000,
            metavar="N",
            help="bootstrap resamples for s_sel and the intervals (default 1000)",
        )
        parser.add_argument(
            "--ar-trials",
            "--paired-ar-n",
            "-parn",
            dest="ar_trials",
            type=int,
            default=10000,
            metavar="N",
            help="approximate randomisation trials (default 10000)",
        )
        parser.add_argument(
            "--seed",
            type=int,
            default=12345,
            help="seed of every resampling (default 12345, as sacreBLEU's SACREBLEU_SEED)",
        )
        parser.add_argument(
            "--workers", type=int, default=1, help="processes for metric statistics (default 1)"
        )
        parser.add_argument("--json", metavar="PATH", help="write the results as JSON here")
        parser.add_argument("--latex", metavar="PATH", help="write a LaTeX table here")

    def handle(self, *args: Any, **options: Any) -> None:
        names = metric_names()
        unknown = [m for m in options["metrics"] if m not in names]
        if unknown:
            raise CommandError(
                f"unknown metric {', '.join(unknown)}; choose from {', '.join(names)}",
                returncode=EXIT_BAD_INPUT,
            )
        option_problem = metric_option_problem(options)
        if option_problem:
            raise CommandError(option_problem, returncode=EXIT_BAD_INPUT)
        for name in ("resamples", "ar_trials", "workers"):
            if options[name] < (2 if name == "resamples" else 1):
                flag = "--" + name.replace("_", "-")
                raise CommandError(f"{flag} is too small", returncode=EXIT_BAD_INPUT)
        systems = []
        for entry in options["system"]:
            if len(entry) < 2:
                raise CommandError(
                    f"--system {entry[0]} needs at least one file after the name",
                    returncode=EXIT_BAD_INPUT,
                )
            systems.append((entry[0], [read_lines(path) for path in entry[1:]]))
        references = [read_lines(path) for path in options["refs"]]
        baseline = options["baseline"] or systems[0][0]
        metric_options = metric_options_given(options)
        try:
            report = evaluate_outputs(
                systems,
                references,
                metrics=options["metrics"],
                baseline=baseline,
                options=metric_options,
                n_bootstrap=options["resamples"],
                n_trials=options["ar_trials"],
                seed=options["seed"],
                workers=options["workers"],
            )
        except (ValueError, MetricUnavailableError) as exc:
            raise CommandError(str(exc), returncode=EXIT_BAD_INPUT) from None

        if options["format"] == "json":
            self.stdout.write(json.dumps(report_json(report), indent=2, ensure_ascii=False))
        else:
            self.stdout.write(format_multeval_table(report), ending="")
            for metric in report.metrics:
                self.stdout.write(metric.signature)
        if options["json"]:
            Path(options["json"]).write_text(
                json.dumps(report_json(report), indent=2, ensure_ascii=False) + "\n",
                encoding="utf-8",
            )
        if options["latex"]:
            Path(options["latex"]).write_text(format_latex_table(report), encoding="utf-8")
