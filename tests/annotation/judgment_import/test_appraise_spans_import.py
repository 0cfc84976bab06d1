"""Appraise's ESA/MQM export imported onto a campaign: files written here by hand in the layout
of ``ExportSystemScoresToCSV`` for document-level ESA/MQM campaigns (12 fields, the spans a JSON
list with UTF-16 offsets, the end inclusive, "missing" for an omission) are detected, their
spans land on the campaign's texts in code points, and each system's score is the one worked out
here by hand from the file: ESA's published scores, MQM's weighted errors."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import pytest

from annotation.analysis.selectors import campaign_analysis_compute
from annotation.campaigns.services import campaign_data_import
from annotation.campaigns.uploads import UploadError, UploadFile
from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.services import judgments_import, judgments_preview
from annotation.models import JudgmentSpan, JudgmentValue
from tests.factories import lines, make_campaign, make_user

pytestmark = pytest.mark.django_db

SOURCE = ["Das Haus ist klein.", "Wir fahren 🚗 nach Berlin.", "Die Sitzung beginnt um neun."]
OUTPUTS = {
    "good": ["The house is small.", "We go 🚗 to Berlin.", "The meeting starts at nine."],
    # "We 🚗🚗 Berlin go." in UTF-16 units: W0 e1 _2 🚗3-4 🚗5-6 _7 B8 e9 r10 l11 i12 n13 _14
    # g15 o16 .17
    "bad": ["House small.", "We 🚗🚗 Berlin go.", "Meeting nine."],
}


@pytest.fixture
def campaign() -> Any:
    owner = make_user("appraise-importer", organizer=True)
    made = make_campaign(owner=owner, name="Appraise spans")
    files = [UploadFile("src.de", lines(SOURCE), "source")] + [
        UploadFile(f"{system}.txt", lines(texts), "systems") for system, texts in OUTPUTS.items()
    ]
    campaign_data_import(campaign=made, files=files, user=owner)
    return made


def span(start: Any, end: Any, severity: str, *error_type: str) -> dict[str, Any]:
    return {
        "start_i": start,
        "end_i": end,
        "severity": severity,
        "error_type": list(error_type) or None,
    }


def line(user: str, system: str, item: int, score: int, spans: list[Any], **more: str) -> str:
    """One row as Appraise's csv.writer writes it: the spans field quoted, quotes doubled."""
    fields = [
        user,
        system,
        str(item),
        more.get("type", "TGT"),
        "deu",
        "eng",
        str(score),
        f"doc1#{system}",
        more.get("whole", "False"),
        '"' + json.dumps(spans).replace('"', '""') + '"',
        "1718000000.5",
        "1718000012.0",
    ]
    return ",".join(fields)


ESA_ROWS = [
    line("alice", "good", 1, 90, []),
    line("alice", "good", 2, 70, [span(6, 7, "minor")]),  # 🚗, two UTF-16 units
    line("alice", "bad", 1, 30, [span(0, 4, "major"), span("missing", "missing", "minor")]),
    # "Berlin", half of the second 🚗 (widened to it), and an undecided span (left out).
    line(
        "alice",
        "bad",
        2,
        20,
        [span(8, 13, "major"), span(5, 5, "minor"), span(15, 16, "undecided")],
    ),
    line("bob", "good", 1, 100, []),
    line("bob", "bad", 1, 50, [span(6, 10, "major")]),  # "small"
]
ESA_BY_HAND = {"good": (90 + 70 + 100) / 3, "bad": (30 + 20 + 50) / 3}
# The analysis' system score: the mean over segments of each segment's mean.
ESA_SYSTEMS = {"good": ((90 + 100) / 2 + 70) / 2, "bad": ((30 + 50) / 2 + 20) / 2}

# The score field of MQM rows is Appraise's hidden slider (0): not read.
MQM_ROWS = [
    line("alice", "good", 1, 0, []),
    line("alice", "good", 2, 0, [span(6, 7, "minor", "Linguistic conventions", "Punctuation")]),
    line(
        "alice",
        "bad",
        1,
        0,
        [
            span(0, 4, "major", "Accuracy", "Mistranslation"),
            span("missing", "missing", "minor", "Accuracy", "Omission"),
        ],
    ),
    line("alice", "bad", 2, 0, [span(8, 13, "neutral", "Style", "Awkward style")]),
    line("bob", "good", 1, 0, []),
    line("bob", "bad", 1, 0, [span(6, 10, "major", "Terminology", "Wrong term")]),
]
# Google's weights: minor punctuation 0.1; major 5 + minor 1; neutral 0; major 5.
MQM_BY_HAND = {"good": -(0 + 0.1 + 0) / 3, "bad": -((5 + 1) + 0 + 5) / 3}
MQM_SYSTEMS = {"good": -((0 + 0) / 2 + 0.1) / 2, "bad": -((6 + 5) / 2 + 0) / 2}


def export(rows: list[str], name: str = "wmt24-esa.csv") -> UploadFile:
    return UploadFile(name, ("\n".join(rows) + "\n").encode(), "")


def system_means(criterion: str) -> dict[str, float]:
    scores: dict[str, list[float]] = defaultdict(list)
    for system, value in JudgmentValue.objects.filter(criterion=criterion).values_list(
        "output__system__name", "value"
    ):
        scores[system].append(value)
    return {s: sum(v) / len(v) for s, v in scores.items()}


def analysed_means(campaign: Any) -> dict[str, float]:
    [criterion] = campaign_analysis_compute(campaign=campaign).criteria
    return {s.name: s.mean_raw for s in criterion.ranked_systems}


def stored_spans() -> dict[tuple[str, str, int], tuple[str, str]]:
    return {
        (s.judgment.annotator.username.split("-")[-1], s.output.text, s.start): (
            f"{s.start}-{s.end}",
            f"{s.severity}/{s.category}",
        )
        for s in JudgmentSpan.objects.select_related("judgment__annotator", "output")
    }


def test_an_esa_export_yields_its_published_scores_and_spans_in_code_points(campaign) -> None:  # type: ignore[no-untyped-def]
    preview = judgments_preview(campaign=campaign, upload=export(ESA_ROWS))
    assert (preview.file_format, preview.rows, preview.judgments) == ("appraise-spans", 6, 6)
    record = judgments_import(campaign=campaign, upload=export(ESA_ROWS), user=None)
    assert record.config.protocol == "esa"
    assert system_means("score") == pytest.approx(ESA_BY_HAND)
    assert analysed_means(campaign) == pytest.approx(ESA_SYSTEMS)
    assert stored_spans() == {
        ("alice", "We go 🚗 to Berlin.", 6): ("6-7", "minor/"),
        ("alice", "House small.", 0): ("0-5", "major/"),
        ("alice", "House small.", 12): ("12-13", "minor/"),  # the marker after 12 characters
        ("alice", "We 🚗🚗 Berlin go.", 4): ("4-5", "minor/"),
        ("alice", "We 🚗🚗 Berlin go.", 6): ("6-12", "major/"),
        ("bob", "House small.", 6): ("6-11", "major/"),
    }


def test_an_mqm_export_is_scored_from_its_spans_with_the_configs_weights(campaign) -> None:  # type: ignore[no-untyped-def]
    record = judgments_import(campaign=campaign, upload=export(MQM_ROWS), user=None)
    assert record.config.protocol == "mqm"
    assert system_means("mqm") == pytest.approx(MQM_BY_HAND)
    assert analysed_means(campaign) == pytest.approx(MQM_SYSTEMS)
    assert stored_spans() == {
        ("alice", "We go 🚗 to Berlin.", 6): ("6-7", "minor/fluency/punctuation"),
        ("alice", "House small.", 0): ("0-5", "major/accuracy/mistranslation"),
        ("alice", "House small.", 12): ("12-13", "minor/accuracy/omission"),
        ("alice", "We 🚗🚗 Berlin go.", 6): ("6-12", "neutral/style"),
        ("bob", "House small.", 6): ("6-11", "major/terminology"),
    }


def test_the_protocol_option_imports_an_esa_file_as_mqm(campaign) -> None:  # type: ignore[no-untyped-def]
    record = judgments_import(
        campaign=campaign,
        upload=export(ESA_ROWS),
        user=None,
        options=ImportOptions(protocol="mqm"),
    )
    assert record.config.protocol == "mqm"
    # Spans without an error type are "other": major 5 and minor 1 (Google's weights).
    assert system_means("mqm") == pytest.approx(
        {"good": -(0 + 1 + 0) / 3, "bad": -((5 + 1) + (5 + 1) + 5) / 3}
    )


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (line("alice", "good", 1, 90, []).replace('"[]"', '"[{"'), "the spans (field 10) are"),
        (line("alice", "good", 1, 90, [span(0, 19, "minor")]), "not within the output of 19"),
        (line("alice", "good", 1, 90, [span(4, 2, "minor")]), "start_i 4 and end_i 2"),
        (line("alice", "good", 1, 90, [span("missing", 3, "minor")]), 'nor both "missing"'),
        (line("alice", "good", 1, 90, [span(0, 1, "critical")]), "severity 'critical'"),
        (
            line("alice", "good", 1, 90, [span(0, 4, "minor"), span(4, 6, "major")]),
            "characters 0–5 and 4–7 overlap",
        ),
        (line("alice", "good", 1, 90, [], whole="True"), "a whole-document item"),
    ],
)
def test_a_bad_row_is_refused_naming_its_line(campaign, row: str, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UploadError) as refused:
        judgments_import(
            campaign=campaign, upload=export([ESA_ROWS[1], row]), user=None, options=ImportOptions()
        )
    [problem] = refused.value.problems
    assert problem.line == 2
    assert message in problem.message
    assert not JudgmentValue.objects.exists()


def test_a_neutral_span_cannot_be_imported_as_esa(campaign) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UploadError) as refused:
        judgments_import(
            campaign=campaign,
            upload=export(MQM_ROWS),
            user=None,
            options=ImportOptions(protocol="esa"),
        )
    [problem] = refused.value.problems
    assert problem.line == 4
    assert "a neutral span" in problem.message


def test_a_file_without_error_types_or_scores_is_refused_until_the_protocol_is_chosen(
    campaign,
) -> None:  # type: ignore[no-untyped-def]
    # An MQM campaign without errors exports rows of score 0 and no spans; read as ESA they
    # would be scores of 0, the worst translations.
    rows = [line("alice", "good", 1, 0, []), line("alice", "bad", 2, 0, [])]
    with pytest.raises(UploadError) as refused:
        judgments_import(campaign=campaign, upload=export(rows), user=None)
    [problem] = refused.value.problems
    assert problem.line == 1
    assert "choose the protocol (ESA or MQM)" in problem.message
    assert not JudgmentValue.objects.exists()
    record = judgments_import(
        campaign=campaign, upload=export(rows), user=None, options=ImportOptions(protocol="mqm")
    )
    assert record.config.protocol == "mqm"
    assert system_means("mqm") == {"good": 0.0, "bad": 0.0}
