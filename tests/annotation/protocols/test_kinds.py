"""What each registered kind answers through the kinds' interface: the parts of its screen
exist, its QC copies degrade the outputs its answers can tell apart, and imported values are
checked on their own and on their screen."""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest
from django.contrib.staticfiles import finders
from django.template.loader import get_template

from annotation.protocols import (
    ADEQUACY_FLUENCY,
    DIRECT_ASSESSMENT,
    PAIRWISE,
    PROTOCOLS,
    RANKING,
    SCORES,
)


@pytest.mark.parametrize("key", list(PROTOCOLS))
def test_every_kind_has_the_parts_of_its_screen(key: str) -> None:
    kind = PROTOCOLS[key]
    get_template(kind.screen_template)
    get_template(kind.keys_template)
    assert kind.screen_script in kind.screen_scripts
    for script in kind.screen_scripts:
        assert finders.find(script), script


def test_the_analysis_family_is_the_kinds() -> None:
    assert PROTOCOLS[RANKING].analysis == PAIRWISE
    assert PROTOCOLS[ADEQUACY_FLUENCY].analysis == SCORES
    assert PROTOCOLS[DIRECT_ASSESSMENT].analysis == SCORES


def test_a_ranking_bad_reference_degrades_one_output_and_a_scored_one_every_output() -> None:
    rng = np.random.default_rng(3)
    slots = [PROTOCOLS[RANKING].degraded_positions(5, rng) for _ in range(200)]
    assert all(len(s) == 1 for s in slots)
    # Every slot is drawn, each about a fifth of the time.
    counts = np.bincount([s[0] for s in slots], minlength=5)
    assert counts.min() > 20
    assert PROTOCOLS[RANKING].degraded_positions(1, rng) == [0]
    # Scored outputs are judged one by one: all degraded, and no random draw is spent.
    before = rng.bit_generator.state
    assert PROTOCOLS[ADEQUACY_FLUENCY].degraded_positions(4, rng) == [0, 1, 2, 3]
    assert rng.bit_generator.state == before


def test_imported_values_are_checked_by_the_kind() -> None:
    da = PROTOCOLS[DIRECT_ASSESSMENT]
    [score] = da.import_criteria()
    assert da.import_value_problem(score, 100) is None
    assert da.import_value_problem(score, 101, scale_hint=" (hint)") == (
        "score 101 is outside the score scale 0–100 (hint)"
    )
    assert da.screen_value_problem("score", 100, 1) is None
    assert not da.imports_need_screens

    ranking = PROTOCOLS[RANKING]
    [rank] = ranking.import_criteria()
    assert rank.key == "rank"
    assert ranking.imports_need_screens
    assert ranking.import_value_problem(rank, 7) is None  # its screen decides
    assert ranking.import_value_problem(rank, 0) == "rank 0 is not a whole number from 1"
    assert ranking.import_value_problem(rank, 2.5) == "rank 2.5 is not a whole number from 1"
    assert ranking.screen_value_problem("rank", 5, 5) is None
    assert ranking.screen_value_problem("rank", 6, 5) == "rank 6"


def test_ranks_have_no_histogram_and_scores_do() -> None:
    assert PROTOCOLS[RANKING].histogram_criteria() == ()
    assert [c.key for c in PROTOCOLS[ADEQUACY_FLUENCY].histogram_criteria()] == [
        "adequacy",
        "fluency",
    ]


def test_no_module_outside_the_kinds_asks_which_kind_it_is() -> None:
    """Outside annotation/protocols nothing reads a kind's identity to decide what to do: no
    ``== "ranking"``-style test on a protocol key, no kind class imported (the kinds' constants
    serve as defaults and demo data only)."""
    root = pathlib.Path(__file__).resolve().parents[3]
    keys = "|".join(re.escape(k) for k in ("adequacy_fluency", "ranking", "direct_assessment"))
    constants = "ADEQUACY_FLUENCY|RANKING|DIRECT_ASSESSMENT"
    pattern = re.compile(
        rf"protocol\w*\s*(==|!=|\bin\b)\s*[\"'({{]?\s*[\"']?({keys})|"
        rf"(==|!=)\s*({constants})\b|RankingProtocol"
    )
    found = []
    for folder in ("annotation", "metrics", "evalsite", "templates", "static"):
        for path in (root / folder).rglob("*"):
            if path.suffix not in {".py", ".html", ".js"} or "protocols" in path.parts:
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if pattern.search(line):
                    found.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    assert found == []
