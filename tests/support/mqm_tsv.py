"""A small Google MQM TSV (Google's columns: system, doc, doc_id, seg_id, rater, source, target,
category, severity; ``<v>…</v>`` around each error) on the texts of ``tests.factories.plain_files``,
with its MQM worked out by hand."""

from __future__ import annotations

from annotation.campaigns.uploads import UploadFile

HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity"


def row(
    system: str, seg: int, rater: str, source: str, target: str, category: str, severity: str
) -> tuple[str, ...]:
    """A row of Google's MQM TSV: system, doc, doc_id, seg_id, rater, source, target, category,
    severity (one document here, so doc_id is seg_id)."""
    return (system, "d1", str(seg), str(seg), rater, source, target, category, severity)


ROWS = [
    # good/opt0: "The house is small.", "The dog barks loud."
    row("good", 1, "rater1", "Das Haus ist klein.", "The house is small.", "No-error", "No-error"),
    row("good", 1, "rater2", "Das Haus ist klein.", "The house is small.", "No-error", "No-error"),
    row(
        "good",
        2,
        "rater1",
        "Der Hund bellt laut.",
        "The dog barks <v>loud</v>.",
        "Fluency/Grammar",
        "Minor",
    ),
    row("good", 2, "rater2", "Der Hund bellt laut.", "The dog barks loud.", "No-error", "No-error"),
    # bad/opt0: "House small.", "Dog the barks."
    row(
        "bad",
        1,
        "rater1",
        "Das <v>Haus ist</v> klein.",
        "House small.",
        "Accuracy/Omission",
        "Major",
    ),
    row(
        "bad", 1, "rater1", "Das Haus ist klein.", "<v>House</v> small.", "Fluency/Grammar", "Minor"
    ),
    row(
        "bad",
        1,
        "rater2",
        "Das Haus ist klein.",
        "House <v>small</v>.",
        "Accuracy/Mistranslation",
        "Major",
    ),
    row(
        "bad",
        2,
        "rater1",
        "Der Hund bellt laut.",
        "<v>Dog the</v> barks.",
        "Fluency/Grammar",
        "Minor",
    ),
    row(
        "bad",
        2,
        "rater1",
        "Der Hund bellt laut.",
        "Dog the barks<v>.</v>",
        "Fluency/Punctuation",
        "Minor",
    ),
    row(
        "bad",
        2,
        "rater2",
        "Der Hund bellt laut.",
        "<v>Dog the barks.</v>",
        "Non-translation!",
        "Major",
    ),
]
# Google's weights by hand: per (system, segment, rater) the sum, then the mean per system.
BY_HAND = {"good": (0 + 0 + 1 + 0) / 4, "bad": ((5 + 1) + 5 + (1 + 0.1) + 25) / 4}


def mqm_file(rows: list[tuple[str, ...]] = ROWS) -> UploadFile:
    text = "\n".join([HEADER, *("\t".join(row) for row in rows)]) + "\n"
    return UploadFile("mqm_newstest_de-en.tsv", text.encode(), "")
