"""In a real Chromium under the page's Content-Security-Policy: an organizer uploads a human and
two metric .sys.score files on the meta-evaluation page and sees the table and one scatter plot
per metric, the outlier left out drawn apart (the harness fails the test on any violation)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.annotator_pages import log_in
from tests.factories import make_campaign, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HUMAN = {"A": 0.31, "B": 0.29, "C": 0.25, "D": 0.18, "E": 0.16, "F": 0.05, "G": -1.25}
BLEU = {"A": 30.1, "B": 28.0, "C": 29.5, "D": 22.0, "E": 21.5, "F": 18.0, "G": 5.0}
TER = {"A": 50.0, "B": 52.0, "C": 51.0, "D": 60.0, "E": 58.0, "F": 61.0, "G": 90.0}


def write(path: Path, scores: dict[str, float]) -> str:
    path.write_text("".join(f"{system}\t{value}\n" for system, value in scores.items()))
    return str(path)


def test_the_page_draws_a_scatter_per_metric_with_the_outlier_apart(  # type: ignore[no-untyped-def]
    page: Any, live_server, tmp_path: Path, output_dir: Path
) -> None:
    owner = make_user("meta-browser", organizer=True)
    campaign = make_campaign(owner=owner, name="Meta")
    log_in(page, live_server, "meta-browser", lands_on="**/campaigns/")
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/meta-evaluation/")
    page.set_input_files("#id_human", write(tmp_path / "human.sys.score", HUMAN))
    page.set_input_files(
        "#id_metrics",
        [write(tmp_path / "BLEU.sys.score", BLEU), write(tmp_path / "TER.sys.score", TER)],
    )
    page.fill("#id_lower_is_better", "TER")
    page.check("#id_exclude_outliers")
    page.click("main button.primary:has-text('Evaluate')")
    page.wait_for_selector("#meta-evaluation-table")
    assert "Outliers left out (|robust z| > 2.5): G." in page.inner_text("#meta-evaluation")
    page.wait_for_function(
        "() => document.querySelectorAll('#meta-evaluation-plots .plot .main-svg').length >= 2"
    )
    captions = page.locator("#meta-evaluation-plots figcaption").all_inner_texts()
    assert sorted(captions) == ["BLEU", "−TER"]
    # Six evaluated systems in blue, the outlier in its own trace.
    traces = page.evaluate(
        "() => [...document.querySelectorAll('#meta-evaluation-plots .plot')]"
        ".map((el) => el.data.map((t) => t.x.length))"
    )
    assert traces == [[6, 1], [6, 1]]
    shots = output_dir / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=shots / "meta-evaluation.png", full_page=True)


def write_segments(path: Path, scores: dict[str, list[float]]) -> str:
    path.write_text(
        "".join(f"{system}\t{value}\n" for system, values in scores.items() for value in values)
    )
    return str(path)


def test_segment_files_alone_give_the_segment_table(  # type: ignore[no-untyped-def]
    page: Any, live_server, tmp_path: Path, output_dir: Path
) -> None:
    human = {s: [HUMAN[s] * 100 + k for k in (0, 7, 3, 9)] for s in "ABCD"}
    comet = {s: [v + (k % 3) for k, v in enumerate(values)] for s, values in human.items()}
    owner = make_user("meta-segments", organizer=True)
    campaign = make_campaign(owner=owner, name="Meta segments")
    log_in(page, live_server, "meta-segments", lands_on="**/campaigns/")
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/meta-evaluation/")
    page.set_input_files("#id_human_segments", write_segments(tmp_path / "h.seg.score", human))
    page.set_input_files(
        "#id_metric_segments", [write_segments(tmp_path / "COMET.seg.score", comet)]
    )
    page.click("main button.primary:has-text('Evaluate')")
    page.wait_for_selector("#meta-evaluation-segment-table")
    assert page.locator("#meta-evaluation-table").count() == 0
    summary = page.inner_text("#meta-evaluation-segments")
    assert "4 systems, 4 segments, 16 scored by the humans." in summary
    rows = page.locator("#meta-evaluation-segment-table tbody tr").all_inner_texts()
    assert [row.split("\t")[1] for row in rows] == [
        "no grouping",
        "by item (segment)",
        "by system",
    ]
    shots = output_dir / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=shots / "meta-evaluation-segments.png", full_page=True)
