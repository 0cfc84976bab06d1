"""MultEval-style evaluation core: validation, rounding, tables and the JSON shape."""

from __future__ import annotations

import pytest

from evalcore.latex import latex_escape
from evalcore.scoring.evaluation import (
    evaluate_outputs,
    format_latex_table,
    format_multeval_table,
    multeval_round,
    report_json,
)
from evalcore.stats.multirun import MultiRunComparison
from tests.evalcore.corpus import corpus, variant


@pytest.fixture(scope="module")
def report():
    base, refs = corpus(seed=8, n_segments=60)
    systems = [
        ("baseline", [variant(r, base, refs, 0.2) for r in range(2)]),
        ("system_1", [variant(10 + r, base, refs, 0.5) for r in range(2)]),
    ]
    return evaluate_outputs(
        systems,
        refs,
        metrics=["bleu", "ter", "length"],
        baseline="baseline",
        n_bootstrap=100,
        n_trials=200,
        seed=5,
    )


def test_rounding_follows_java_half_up_on_the_shortest_decimal_like_multeval():
    assert multeval_round(0.15, 1) == "0.2"  # C's printf gives 0.1 (0.1499999... in binary)
    assert multeval_round(0.125, 2) == "0.13"
    assert multeval_round(18.449, 1) == "18.4"
    assert multeval_round(-0.04, 1) == "0.0"
    assert multeval_round(1 / 10001, 2) == "0.00"


def test_ascii_table_has_multeval_columns_and_the_baseline_p_is_a_dash(report):
    lines = format_multeval_table(report).splitlines()
    assert lines[0].split() == [
        "n=2",
        "BLEU",
        "(s_sel/s_opt/p)",
        "TER",
        "(s_sel/s_opt/p)",
        "Length",
        "(s_sel/s_opt/p)",
    ]
    assert lines[1].startswith("baseline")
    assert lines[1].count("/-)") == 3
    bleu = report.metrics[0].comparison.systems[1]
    parts = (bleu.s_sel, 1), (bleu.s_opt, 1), (bleu.p_value, 2)
    cell = f"{multeval_round(bleu.mean, 1)} ({'/'.join(multeval_round(*p) for p in parts)})"
    assert cell in lines[2]


def test_results_are_those_of_the_multi_run_core(report):
    metric = report.metrics[0]
    assert metric.name == "bleu"
    assert metric.signature.startswith("BLEU|nrefs:1|bs:100|ar:200|seed:5|")
    assert metric.comparison.n_trials == 200
    assert metric.comparison.seed == 5
    assert isinstance(metric.comparison, MultiRunComparison)


def test_json_shape_is_metric_system_runs_mean_s_sel_s_opt_p(report):
    data = report_json(report)
    assert set(data["metrics"]) == {"bleu", "ter", "length"}
    entry = data["metrics"]["ter"]["system_1"]
    assert set(entry) == {"runs", "mean", "s_sel", "s_opt", "p"}
    assert len(entry["runs"]) == 2
    assert data["metrics"]["ter"]["baseline"]["p"] is None
    assert set(data["signatures"]) == {"bleu", "ter", "length"}
    assert data["settings"]["seed"] == 5
    assert set(data["settings"]) == {
        "runs",
        "segments",
        "resamples",
        "ar_trials",
        "seed",
        "ar_statistic",
    }


def test_latex_table_escapes_names_and_marks_direction(report):
    latex = format_latex_table(report)
    assert r"\begin{tabular}" in latex
    assert r"system\_1" in latex
    assert r"TER $\downarrow$" in latex
    assert r"BLEU $\uparrow$" in latex
    assert latex_escape("a&b_c%") == r"a\&b\_c\%"


@pytest.mark.parametrize(
    ("systems", "message"),
    [
        ([("a", [["x", "y"]]), ("a", [["x", "y"]])], "unique"),
        ([("a", [["x", "y"]]), ("b", [["x"]])], "run 1 has 1 lines"),
        ([("a", [["x", "y"]]), ("b", [["x", "y"], ["x", "y"]])], "same number of runs"),
        ([("a", [])], "no runs"),
    ],
)
def test_inputs_that_cannot_be_evaluated_are_refused_with_a_clear_message(systems, message):
    with pytest.raises(ValueError, match=message):
        evaluate_outputs(systems, [["r", "s"]], metrics=["bleu"], baseline="a")


def test_unknown_metric_and_baseline_are_refused():
    with pytest.raises(ValueError, match="unknown metric meteor"):
        evaluate_outputs([("a", [["x"]])], [["r"]], metrics=["meteor"], baseline="a")
    with pytest.raises(ValueError, match="baseline 'z'"):
        evaluate_outputs([("a", [["x"]])], [["r"]], metrics=["bleu"], baseline="z")


def test_the_latex_table_escapes_what_pdflatex_would_misprint_in_names() -> None:
    """System names come from uploads: the MultEval-style table escapes them as the human
    system report does (``<``, ``>`` and ``|`` print as ¡, ¿ and a dash under OT1; a line
    break would end the table row)."""
    assert latex_escape("sys<1>|b\nrun") == r"sys\textless{}1\textgreater{}\textbar{}b run"
