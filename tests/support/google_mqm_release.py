"""A Google MQM TSV release written by hand in the layout of Google's TED release (github
google/wmt-mqm-human-evaluation, ``ted/ende/mqm_ted_ende.tsv``: ``system doc doc_id seg_id rater
source target category severity comment``; seg_id counts the whole test set, so a file of two
talks has gaps), with a reference rated as a system (``ref-A``) and a second human translation
(``Human-B``). The release tests read back what a campaign built from it holds."""

from __future__ import annotations

from annotation.campaigns.uploads import UploadFile

HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\tcomment"

# Two talks of a TED set whose other talks were not rated: seg_id 1, 2 and 41, 43.
SOURCES = {
    ("talk.1", "1"): "I want to ask you all to consider a simple fact.",
    ("talk.1", "2"): "We can stand on the Earth.",
    ("talk.7", "41"): "The Sun burns our peripheral vision.",
    ("talk.7", "43"): "We see light reflected off the Moon.",
}
TARGETS = {
    "Facebook-AI": [
        "Ich möchte Sie alle bitten, eine einfache Tatsache zu bedenken.",
        "Wir können auf der Erde stehen.",
        "Die Sonne verbrennt unsere periphere Sicht.",
        "Wir sehen Licht, das vom Mond reflektiert wird.",
    ],
    "Online-W": [
        "Ich möchte euch alle bitten, eine einfache Tatsache zu bedenken.",
        "Wir können auf Erde stehen.",
        "Die Sonne verbrennt unser peripheres Sehen.",
        "Wir sehen Licht vom Mond reflektiert.",
    ],
    "ref-A": [
        "Bitte bedenken Sie alle eine einfache Tatsache.",
        "Wir können auf der Erde stehen.",
        "Die Sonne blendet unser peripheres Sehen.",
        "Wir sehen das vom Mond reflektierte Licht.",
    ],
    "Human-B": [
        "Ich bitte Sie alle, eine einfache Tatsache zu bedenken.",
        "Wir stehen auf der Erde.",
        "Die Sonne verbrennt unser Sehen am Rand.",
        "Wir sehen Licht, das der Mond zurückwirft.",
    ],
}
SEGMENTS = list(SOURCES)
NO_ERROR = ("No-error", "No-error", "")

# The errors: (system, seg_id) → [(marked source, marked target, category, severity)].
ERRORS = {
    ("Online-W", "1"): [
        (
            None,
            "Ich möchte <v>euch</v> alle bitten, eine einfache Tatsache zu bedenken.",
            "Fluency/Register",
            "Minor",
        )
    ],
    ("Online-W", "2"): [
        ("We can stand on <v>the</v> Earth.", None, "Accuracy/Omission", "Major"),
    ],
    ("Online-W", "43"): [
        (None, "<v>Wir sehen Licht vom Mond reflektiert</v>.", "Style/Awkward", "Minor"),
        (None, "Wir sehen Licht vom Mond <v>reflektiert</v>.", "Fluency/Grammar", "Major"),
    ],
    ("Facebook-AI", "41"): [
        (
            None,
            "Die Sonne <v>verbrennt</v> unsere periphere Sicht.",
            "Accuracy/Mistranslation",
            "Major",
        )
    ],
    ("ref-A", "41"): [
        (
            None,
            "Die Sonne <v>blendet</v> unser peripheres Sehen.",
            "Accuracy/Mistranslation",
            "Minor",
        )
    ],
    ("Human-B", "2"): [(None, "Wir stehen auf der Erde<v>.</v>", "Fluency/Punctuation", "Minor")],
}


def release_rows() -> list[tuple[str, ...]]:
    """The file's rows: talk.7's seg 43 before its seg 41 (a document's order is its ids')."""
    out = []
    order = [SEGMENTS[0], SEGMENTS[1], SEGMENTS[3], SEGMENTS[2]]
    for doc, seg in order:
        rater = "rater1" if seg in ("1", "43") else "rater2"
        for system, targets in TARGETS.items():
            target = targets[SEGMENTS.index((doc, seg))]
            errors = ERRORS.get((system, seg)) or [(None, None, "No-error", "No-error")]
            for source, marked, category, severity in errors:
                cells = (source or SOURCES[(doc, seg)], marked or target, category, severity)
                out.append((system, doc, seg, seg, rater, *cells, ""))
            if (system, seg) == ("Facebook-AI", "1"):
                out.append(
                    (system, doc, seg, seg, "rater2", SOURCES[(doc, seg)], target, *NO_ERROR)
                )
    return out


def tsv(rows: list[tuple[str, ...]] | None = None) -> UploadFile:
    text = "\n".join([HEADER, *("\t".join(r) for r in rows or release_rows())]) + "\n"
    return UploadFile("mqm_ted_ende.tsv", text.encode(), "")
