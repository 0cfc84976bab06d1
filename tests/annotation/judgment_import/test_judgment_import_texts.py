"""An imported file that carries its texts (the EvalSite table's ``source`` and ``output``
columns) is checked against the campaign's: segments numbered another way are refused naming
the line, instead of misaligning every judgment while every system-level number stays
plausible."""

from __future__ import annotations

from typing import Any

import pytest

from annotation.campaigns.uploads import UploadError, UploadFile
from annotation.judgment_import.formats import judgment_file_text
from annotation.judgment_import.services import judgments_import
from annotation.models import Judgment, Segment, Translation
from tests.analysis_factories import make_text_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign(owner: Any) -> Any:
    made, *_ = make_text_campaign(owner=owner, n_segments=6, system_names=["alpha", "bravo"])
    return made


def _rows(campaign: Any, shift: int = 0, output_of: str = "alpha") -> list[dict[str, Any]]:
    """One DA row per segment and system, carrying the texts of the segment ``shift`` lines
    further on (0: the right ones) and the output of ``output_of``."""
    segments = list(Segment.objects.filter(campaign=campaign).order_by("position"))
    rows = []
    for system in ("alpha", "bravo"):
        for n, segment in enumerate(segments):
            texts_of = segments[(n + shift) % len(segments)]
            output = Translation.objects.get(
                run__system__name=output_of if system == "alpha" else system,
                segment=texts_of,
            ).text
            rows.append(
                {
                    "annotator": "w1",
                    "system": system,
                    "segment": str(segment.position + 1),
                    "type": "SYSTEM",
                    "score": "50",
                    "source": texts_of.source,
                    "output": output,
                }
            )
    return rows


def _import(campaign: Any, owner: Any, rows: list[dict[str, Any]]) -> Any:
    return judgments_import(
        campaign=campaign, upload=UploadFile("past.tsv", judgment_file_text(rows)), user=owner
    )


def test_a_file_whose_texts_are_the_campaigns_imports(campaign: Any, owner: Any) -> None:
    record = _import(campaign, owner, _rows(campaign))
    assert record.summary["judgments"] == 12
    assert Judgment.objects.filter(item__task__config=record.config).count() == 12


def test_segments_numbered_another_way_are_refused_naming_the_line(
    campaign: Any, owner: Any
) -> None:
    with pytest.raises(UploadError) as refused:
        _import(campaign, owner, _rows(campaign, shift=1))
    first = refused.value.problems[0]
    assert (first.file, first.line) == ("past.tsv", 2)
    assert "the source text is not the campaign's segment" in first.message
    assert "sorting the documents by id" in first.message
    assert not Judgment.objects.exists()


def test_an_output_that_is_not_the_systems_is_refused(campaign: Any, owner: Any) -> None:
    with pytest.raises(UploadError) as refused:
        _import(campaign, owner, _rows(campaign, output_of="bravo"))
    first = refused.value.problems[0]
    assert first.line == 2
    assert "the output text is not what the campaign holds for alpha" in first.message


def test_texts_compare_up_to_whitespace_and_unicode_normalisation(
    campaign: Any, owner: Any
) -> None:
    rows = _rows(campaign)
    for row in rows:
        row["source"] = "  " + row["source"].replace(" ", "   ") + " "
    assert _import(campaign, owner, rows).summary["judgments"] == 12
