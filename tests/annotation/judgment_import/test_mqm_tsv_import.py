"""Google's MQM TSV imported onto a campaign: the file (written here by hand in the layout of
Google's released MQM annotations) is detected, its rows become one MQM judgment per rater,
system and segment, with the spans marked <v>…</v> in the target (an error marked in the source
on the missing-content marker), and each system's MQM is the one the file gives, worked out
here by hand with Google's weights; the span report writes the same scores back."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

from annotation.campaigns.services import campaign_data_import
from annotation.campaigns.uploads import UploadError
from annotation.judgment_import.mqm_tsv import GOOGLE_CATEGORIES, google_category, mqm_category
from annotation.judgment_import.services import judgments_import, judgments_preview
from annotation.models import JudgmentSpan, JudgmentValue
from annotation.protocols.mqm import CATEGORIES
from annotation.reports.spans import mqm_tsv
from tests.factories import make_campaign, make_user, plain_files
from tests.support.mqm_tsv import BY_HAND, ROWS, mqm_file, row

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign() -> Any:
    owner = make_user("mqm-importer", organizer=True)
    made = make_campaign(owner=owner)
    campaign_data_import(campaign=made, files=plain_files(), user=owner)
    return made


def test_a_google_mqm_file_yields_the_mqm_it_publishes(campaign: Any) -> None:
    preview = judgments_preview(campaign=campaign, upload=mqm_file())
    assert (preview.file_format, preview.rows, preview.judgments) == ("mqm", 8, 8)
    record = judgments_import(campaign=campaign, upload=mqm_file(), user=None)
    assert record.config.protocol == "mqm"
    scores: dict[str, list[float]] = defaultdict(list)
    for system, value in JudgmentValue.objects.filter(criterion="mqm").values_list(
        "output__system__name", "value"
    ):
        scores[system].append(-value)
    assert {s: sum(v) / len(v) for s, v in scores.items()} == pytest.approx(BY_HAND)
    spans = {
        (s.judgment.annotator.username.split("-")[-1], s.output.text, s.start, s.end): (
            s.severity,
            s.category,
        )
        for s in JudgmentSpan.objects.select_related("judgment__annotator", "output")
    }
    assert spans[("rater1", "The dog barks loud.", 14, 18)] == ("minor", "fluency/grammar")
    # Marked in the source only: the missing-content marker after the 12 characters.
    assert spans[("rater1", "House small.", 12, 13)] == ("major", "accuracy/omission")
    assert spans[("rater1", "House small.", 0, 5)] == ("minor", "fluency/grammar")
    assert spans[("rater2", "Dog the barks.", 0, 14)] == ("major", "non-translation")
    assert len(spans) == 7
    # Google's TSV written back from the campaign gives the same scores.
    back = list(mqm_tsv(campaign=campaign, labels={}))
    assert back[0].rstrip("\n").split("\t")[0] == "system"
    assert len(back) == 1 + len(ROWS)


def test_googles_categories_map_onto_mqms_typology() -> None:
    assert mqm_category("Fluency/Punctuation") == "fluency/punctuation"
    assert mqm_category("Non-translation!") == "non-translation"
    assert mqm_category("Style/Awkward") == "style"
    assert mqm_category("Locale convention/Currency format") == "locale-convention"
    assert mqm_category("Fluency/Character Encoding") == "fluency/character-encoding"
    assert mqm_category("Accuracy/Source language fragment") == "accuracy/untranslated"
    assert mqm_category("Accuracy/Something new") == "other"


def test_a_bad_row_is_refused_naming_its_line(campaign: Any) -> None:
    rows = [*ROWS[:2], (*ROWS[2][:-1], "Critical")]
    with pytest.raises(UploadError) as refused:
        judgments_import(campaign=campaign, upload=mqm_file(rows), user=None)
    [problem] = refused.value.problems
    assert problem.line == 4
    assert "severity 'Critical'" in problem.message
    # A target that is not the system's output is refused too, naming its line.
    rows = [(*ROWS[0][:6], "The home is small.", *ROWS[0][7:])]
    with pytest.raises(UploadError) as refused:
        judgments_import(campaign=campaign, upload=mqm_file(rows), user=None)
    assert refused.value.problems[0].line == 2
    assert not JudgmentValue.objects.exists()


def test_every_mqm_category_reads_back_from_its_google_name() -> None:
    names = [google_category(c.key) for c in CATEGORIES]
    assert len(set(names)) == len(names) == len(GOOGLE_CATEGORIES)
    assert [mqm_category(name) for name in names] == [c.key for c in CATEGORIES]
    assert google_category("accuracy/untranslated") == "Accuracy/Untranslated text"
    assert mqm_category("Accuracy/Untranslated text") == "accuracy/untranslated"
    # A punctuation or non-translation category the typology lacks has no sure weight.
    assert mqm_category("Linguistic conventions/Punctuation") is None


@pytest.mark.parametrize(
    ("source", "target", "message"),
    [
        ("Der Hund bellt laut.", "The dog <v>barks loud.", "the target has a <v> without its </v>"),
        ("Der Hund bellt laut.", "The dog</v> barks loud.", "has a </v> without a <v> before it"),
        ("Der <v>Hund bellt laut.", "The dog barks loud.", "the source has a <v> without its"),
        (
            "Der Hund bellt laut.",
            "<v>The <v>dog</v> barks</v> loud.",
            "the target has a <v> inside a part already marked (markers do not nest)",
        ),
        ("Der Hund bellt laut.", "<v>The</v> dog <v>barks</v> loud.", "marks a second part"),
    ],
)
def test_stray_or_nested_markers_are_refused_naming_the_line(
    campaign: Any, source: str, target: str, message: str
) -> None:
    rows = [*ROWS[:3], row("good", 2, "rater2", source, target, "Fluency/Grammar", "Minor")]
    with pytest.raises(UploadError) as refused:
        judgments_import(campaign=campaign, upload=mqm_file(rows), user=None)
    [problem] = refused.value.problems
    assert problem.line == 5
    assert message in problem.message
    assert not JudgmentValue.objects.exists()


def test_an_unknown_punctuation_category_is_refused_naming_the_line(campaign: Any) -> None:
    rows = [*ROWS[:2], (*ROWS[2][:-2], "Linguistic conventions/Punctuation", "Minor")]
    with pytest.raises(UploadError) as refused:
        judgments_import(campaign=campaign, upload=mqm_file(rows), user=None)
    [problem] = refused.value.problems
    assert problem.line == 4
    assert "'Linguistic conventions/Punctuation' is not one of Google's" in problem.message


def test_spans_on_a_target_spaced_otherwise_than_the_campaigns_are_refused(campaign: Any) -> None:
    """The text check forgives runs of whitespace, but a span after an extra space would mark
    the next character: the row is refused, naming its line."""
    spaced = row(
        "good", 2, "rater2", "Der Hund bellt laut.", "The dog  barks <v>loud</v>.", "Style", "Minor"
    )
    with pytest.raises(UploadError) as refused:
        judgments_import(campaign=campaign, upload=mqm_file([*ROWS[:3], spaced]), user=None)
    [problem] = refused.value.problems
    assert problem.line == 5
    assert "they would mark other characters" in problem.message
    # Without spans the spacing does not matter.
    unmarked = (*spaced[:6], "The dog  barks loud.", "No-error", "No-error")
    judgments_import(campaign=campaign, upload=mqm_file([*ROWS[:3], unmarked]), user=None)
    assert JudgmentValue.objects.count() == 4
