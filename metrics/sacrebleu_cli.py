"""sacreBLEU's command-line options for BLEU, chrF and TER, under sacreBLEU's own flag names and
meanings, for ``manage.py evaluate``: a user who knows ``sacrebleu -lc --chrf-word-order 2``
types the same here and gets the same numbers."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from evalcore.scoring import MetricOptions
from evalcore.scoring.bleu import SMOOTH_METHODS
from evalcore.scoring.sacre import BLEU_TOKENIZERS, SPM_TOKENIZERS, spm_model_problem


def add_sacrebleu_options(parser: ArgumentParser) -> None:
    """sacreBLEU 2's metric options (its ``--help``: "BLEU related arguments", "chrF related
    arguments", "TER related arguments") and ``-f``."""
    bleu = parser.add_argument_group("BLEU (as sacreBLEU's)")
    bleu.add_argument(
        "-tok",
        "--tokenize",
        default="13a",
        metavar="TOK",
        help=f"tokenizer: {' '.join(BLEU_TOKENIZERS + SPM_TOKENIZERS)} (the last three need "
        "their SentencePiece model present locally)",
    )
    bleu.add_argument(
        "-lc",
        "--lowercase",
        action="store_true",
        help="case-insensitive BLEU (and Length and the word metrics); not chrF or TER",
    )
    bleu.add_argument("-s", "--smooth-method", choices=SMOOTH_METHODS, default="exp")
    bleu.add_argument(
        "--smooth-value", type=float, default=None, help="for floor and add-k smoothing"
    )
    chrf = parser.add_argument_group("chrF (as sacreBLEU's)")
    chrf.add_argument("-cc", "--chrf-char-order", type=int, default=6)
    chrf.add_argument("-cw", "--chrf-word-order", type=int, default=0, help="2: chrF++")
    chrf.add_argument("--chrf-beta", type=int, default=2)
    chrf.add_argument("--chrf-whitespace", action="store_true", help="keep whitespace")
    chrf.add_argument("--chrf-lowercase", action="store_true")
    chrf.add_argument("--chrf-eps-smoothing", action="store_true")
    ter = parser.add_argument_group("TER (as sacreBLEU's)")
    ter.add_argument("--ter-case-sensitive", action="store_true")
    ter.add_argument("--ter-asian-support", action="store_true")
    ter.add_argument("--ter-no-punct", action="store_true")
    ter.add_argument("--ter-normalized", action="store_true")
    parser.add_argument(
        "-f",
        "--format",
        choices=["text", "json"],
        default="text",
        help="text: MultEval's table and the signatures; json: the results as JSON",
    )


def sacrebleu_metric_options(options: dict[str, Any]) -> MetricOptions:
    """The metric settings the parsed options ask for."""
    return MetricOptions(
        tokenize=options["tokenize"],
        lowercase=options["lowercase"],
        smooth_method=options["smooth_method"],
        smooth_value=options["smooth_value"],
        chrf_char_order=options["chrf_char_order"],
        chrf_word_order=options["chrf_word_order"],
        chrf_beta=options["chrf_beta"],
        chrf_whitespace=options["chrf_whitespace"],
        chrf_lowercase=options["chrf_lowercase"],
        chrf_eps_smoothing=options["chrf_eps_smoothing"],
        ter_case_sensitive=options["ter_case_sensitive"],
        ter_asian_support=options["ter_asian_support"],
        ter_no_punct=options["ter_no_punct"],
        ter_normalized=options["ter_normalized"],
        lang=options["lang"],
    )


def tokenizer_unavailable(tokenize: str) -> str | None:
    """Why the tokenizer cannot be used here (unknown, or its model file missing), or None."""
    if tokenize in SPM_TOKENIZERS:
        return spm_model_problem(tokenize)
    if tokenize not in BLEU_TOKENIZERS:
        return (
            f"unknown tokenizer {tokenize}; choose from "
            f"{', '.join(BLEU_TOKENIZERS + SPM_TOKENIZERS)}"
        )
    return None
