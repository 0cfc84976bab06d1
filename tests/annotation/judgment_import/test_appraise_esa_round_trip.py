"""Appraise's ESA score export written by EvalSite (``spans.appraise.csv``) read back: generated
files in Appraise's layout (spans in UTF-16 units with the end inclusive, characters outside
the Basic Multilingual Plane, omissions, repeats and references, names that begin like
spreadsheet formulas) are imported, exported and the export imported onto a second campaign
with the same texts: every judgment, span, severity, category and score comes back, and the
second campaign exports the same rows. Judgments made in EvalSite on merged identical outputs
are written once per credited system and read back so."""

from __future__ import annotations

import csv
import io
import itertools
import json
import uuid
from collections import defaultdict
from typing import Any

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from annotation.campaigns.services import campaign_data_import
from annotation.campaigns.uploads import UploadFile
from annotation.judging.services import judgment_record
from annotation.judgment_import.appraise_spans import parse_appraise_spans
from annotation.judgment_import.rows import Problems
from annotation.judgment_import.services import judgments_import
from annotation.judgment_import.text_spans import spans_on_text
from annotation.models import Campaign, Item, JudgmentSpan, JudgmentValue
from annotation.protocols import ESA
from annotation.protocols.mqm import CATEGORIES
from annotation.reports.appraise import appraise_esa_csv, appraise_spans
from annotation.tasking.services import task_assign_next
from evalsite.formatting import FORMULA_STARTS
from tests.factories import PASSWORD, lines, make_campaign, make_config, make_user
from tests.merge_factories import MERGE_SYSTEMS, make_merge_campaign

pytestmark = pytest.mark.django_db

WORDS = ["Haus", "klein", "über", "Straße", "中文", "😀", "a", "bc", "x.", "—", "🚗🚗", "=1"]
SYSTEMS = ("sys-a", "=sys-b", "sys-c")
RATERS = ("rater1", "-rater2", "rater3")
SEGMENTS = 8

# Per (rater, system or REF, line, item kind): the score and the spans (start, end, severity,
# category) in code points of the campaign's text.
Judgments = dict[tuple[str, str, int, str], tuple[float, list[tuple[int, int, str, str]]]]


def texts(seed: int) -> tuple[list[str], list[str], dict[str, list[str]]]:
    rng = np.random.default_rng(seed)

    def text() -> str:
        return " ".join(rng.choice(WORDS, size=int(rng.integers(1, 8))))

    sources = [text() for _ in range(SEGMENTS)]
    references = [text() for _ in range(SEGMENTS)]
    return sources, references, {s: [text() for _ in range(SEGMENTS)] for s in SYSTEMS}


def campaign_with(seed: int, name: str) -> Campaign:
    owner = make_user(f"appraise-round-{name}", organizer=True)
    campaign = make_campaign(owner=owner, name=name)
    sources, references, outputs = texts(seed)
    files = [
        UploadFile("src.de", lines(sources), "source"),
        UploadFile("ref.en", lines(references), "references"),
        UploadFile("docs.txt", lines([f"d{n // 3}" for n in range(SEGMENTS)]), "doc_ids"),
    ]
    files += [UploadFile(f"{s}.txt", lines(outputs[s]), "systems") for s in SYSTEMS]
    campaign_data_import(campaign=campaign, files=files, user=owner)
    return campaign


def utf16(text: str) -> list[int]:
    """Where each code point of ``text`` starts in UTF-16 units, and the end."""
    units = [0]
    for character in text:
        units.append(units[-1] + (2 if ord(character) > 0xFFFF else 1))
    return units


def marks(rng: np.random.Generator, text: str) -> list[dict[str, Any]]:
    """Up to four spans that do not overlap, in Appraise's offsets, an omission among them."""
    cuts = sorted({int(c) for c in rng.integers(0, len(text) + 1, size=8)})
    pairs = [(a, b) for a, b in itertools.pairwise(cuts) if a < b][::2]
    units = utf16(text)
    spans: list[dict[str, Any]] = [
        {
            "start_i": units[a],
            "end_i": units[b] - 1,
            "severity": str(rng.choice(["minor", "major"])),
        }
        for a, b in pairs[: int(rng.integers(0, 4))]
    ]
    if rng.random() < 0.3:
        spans.append({"start_i": "missing", "end_i": "missing", "severity": "major"})
    if rng.random() < 0.2:  # left out by the import, as Appraise's own undecided spans
        spans.append({"start_i": 0, "end_i": 0, "severity": "undecided"})
    return [{**s, "error_type": None} for s in spans]


def appraise_file(seed: int) -> str:
    rng = np.random.default_rng(seed + 1)
    _sources, references, outputs = texts(seed)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    clock = 1_718_000_000.0
    for rater in RATERS:
        judged = []
        for system in SYSTEMS:
            for seg in sorted(rng.choice(SEGMENTS, size=5, replace=False).tolist()):
                judged.append((system, seg, "TGT", outputs[system][seg]))
        judged += [(system, seg, "CHK", outputs[system][seg]) for system, seg, *_ in judged[::4]]
        judged += [("REF", seg, "REF", references[seg]) for seg in range(0, SEGMENTS, 3)]
        for system, seg, kind, text in judged:
            start, clock = clock, clock + float(rng.integers(5, 90))
            writer.writerow(
                [
                    rater,
                    system,
                    seg + 1,
                    kind,
                    "deu",
                    "eng",
                    int(rng.integers(0, 101)),
                    f"d{seg // 3}#{system}",
                    "False",
                    json.dumps(marks(rng, text)),
                    f"{start:.3f}",
                    f"{clock:.3f}",
                ]
            )
    return buffer.getvalue()


def _imported(username: str) -> str:
    """The rater an imported judgment's account stands for (``imp-<campaign>-<rater>``)."""
    return username.split("-", 2)[2]


def stored(campaign: Campaign, rater: Any = _imported) -> Judgments:
    spans: dict[tuple[int, int], list[tuple[int, int, str, str]]] = defaultdict(list)
    for judgment, output, start, end, severity, category in JudgmentSpan.objects.filter(
        judgment__item__task__config__campaign=campaign
    ).values_list("judgment_id", "output_id", "start", "end", "severity", "category"):
        spans[(judgment, output)].append((start, end, severity, category))
    found: Judgments = {}
    for judgment, output, user, system, kind, position, value in JudgmentValue.objects.filter(
        judgment__item__task__config__campaign=campaign, criterion="score"
    ).values_list(
        "judgment_id",
        "output_id",
        "judgment__annotator__username",
        "output__system__name",
        "output__kind",
        "judgment__item__segment__position",
        "value",
    ):
        key = (rater(user), system or "REF", position + 1, kind)
        assert key not in found, key
        found[key] = (value, sorted(spans[(judgment, output)]))
    return found


def appraise_fields(written: str) -> list[list[str]]:
    """The rows' first 12 fields (Appraise's without the batch), sorted."""
    return sorted(row[:12] for row in csv.reader(io.StringIO(written)))


def export(campaign: Campaign) -> str:
    labels = {pk: _imported(name) for pk, name in campaign.annotators.values_list("pk", "username")}
    return appraise_esa_csv(campaign=campaign, labels=labels)


@pytest.mark.parametrize("seed", [3, 2025])
def test_an_exported_appraise_file_reads_back_to_the_same_judgments(seed: int) -> None:
    text = appraise_file(seed)
    first = campaign_with(seed, f"first {seed}")
    judgments_import(campaign=first, upload=UploadFile("esa.csv", text.encode(), ""), user=None)
    imported = stored(first)
    assert len(imported) == text.count("\n")
    assert sum(len(spans) for _score, spans in imported.values()) > 30
    assert {key[3] for key in imported} == {"real", "repeat", "reference"}
    assert any(
        start >= 0 and end - start > 1
        for _s, spans in imported.values()
        for start, end, *_ in spans
    )

    written = export(first)
    rows = list(csv.reader(io.StringIO(written)))
    assert len(rows) == len(imported)
    # With the batch number and the item (its id in the campaign) the batches download needs.
    assert {len(row) for row in rows} == {14}
    names = [cell for row in rows for cell in (row[0], row[1], row[7])]
    assert not [cell for cell in names if cell.startswith(FORMULA_STARTS)]
    assert "'=sys-b" in names
    assert "'-rater2" in names

    again = campaign_with(seed, f"again {seed}")
    judgments_import(campaign=again, upload=UploadFile("back.csv", written.encode(), ""), user=None)
    assert stored(again) == imported
    # The same rows again; the second campaign's tasks are the first's batches, so their
    # order, batch numbers and item ids are its own.
    assert appraise_fields(export(again)) == appraise_fields(written)


def test_judgments_of_merged_outputs_are_written_for_every_credited_system(owner: Any) -> None:
    campaign = make_merge_campaign(owner=owner)
    config = make_config(
        campaign, ESA, merge_identical=True, items_per_task=100, outputs_per_screen=5
    )
    rater = make_user("esa-merged")
    assignment = task_assign_next(config=config, annotator=rater)
    assert assignment is not None
    major = {"start": 0, "end": 3, "severity": "major"}
    for item in Item.objects.filter(task=assignment.task).order_by("position"):
        judgment_record(
            assignment_id=assignment.pk,
            annotator=rater,
            item_id=item.pk,
            revision_seen=0,
            submission_id=uuid.uuid4(),
            answer={
                str(o.pk): {
                    "score": 40.0 + o.position,
                    "spans": [major] if o.credits.exists() else [],
                }
                for o in item.outputs.all()
            },
        )
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    response = client.get(reverse("campaign_report_spans", args=[campaign.pk, "appraise.csv"]))
    assert response.status_code == 200
    assert response["Content-Disposition"].endswith('-spans.appraise.csv"')
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    real = [row for row in rows if row[3] == "TGT"]
    # One row per system and segment: 22 shown outputs, 30 systems credited.
    assert sorted((row[2], row[1]) for row in real) == sorted(
        (str(s + 1), name) for s in range(6) for name in MERGE_SYSTEMS
    )
    with_error = sorted((row[2], row[1]) for row in real if json.loads(row[9]))
    assert with_error == [
        ("1", "alpha"),
        ("1", "bravo"),
        ("1", "charlie"),
        ("3", "alpha"),
        ("3", "bravo"),
        ("4", "alpha"),
        ("4", "bravo"),
        ("4", "charlie"),
        ("4", "delta"),
        ("4", "echo"),
        ("6", "delta"),
        ("6", "echo"),
    ]
    assert {row[0] for row in rows} == {"A001"}


@st.composite
def text_and_spans(draw: Any) -> tuple[str, list[tuple[int, int, str, str]]]:
    """A text (whitespace around it, characters beyond the Basic Multilingual Plane) and spans
    on its characters that do not overlap, the missing-content marker perhaps among them; ESA's
    (no category) or MQM's (every category and severity)."""
    core = draw(st.text(st.sampled_from(["a", "ß", "中", "😀", "🚗", " ", "="]), min_size=1))
    core = core.strip() or "x"
    text = draw(st.sampled_from(["", " ", "  "])) + core + draw(st.sampled_from(["", " "]))
    lead = len(text) - len(text.lstrip())
    cuts = sorted(draw(st.sets(st.integers(lead, lead + len(core)), max_size=8)))
    pairs = [(a, b) for a, b in itertools.pairwise(cuts) if a < b][::2]
    mqm = draw(st.booleans())
    severities = ["minor", "major", "neutral"] if mqm else ["minor", "major"]
    categories = [c.key for c in CATEGORIES] if mqm else [""]

    def marked() -> tuple[str, str]:
        return draw(st.sampled_from(severities)), draw(st.sampled_from(categories))

    spans = [(a, b, *marked()) for a, b in pairs]
    if draw(st.booleans()):
        spans.append((len(text), len(text) + 1, *marked()))
    return text, spans


@given(text_and_spans())
def test_spans_written_in_appraises_offsets_are_read_back_on_the_same_characters(
    drawn: tuple[str, list[tuple[int, int, str, str]]],
) -> None:
    text, spans = drawn
    buffer = io.StringIO()
    written = json.dumps(appraise_spans(text, spans))
    values = ["r", "s", "1", "TGT", "de", "en", "50", "d#s", "False", written, "1.0e9", "1.1e9"]
    csv.writer(buffer, lineterminator="\n").writerow(values)
    (row,) = parse_appraise_spans("f", buffer.getvalue().splitlines(), 0).rows
    placed = spans_on_text(Problems("f"), row, text)
    assert placed is not None
    assert placed.spans == tuple(sorted(spans))


def test_every_mqm_category_is_written_as_a_path_that_reads_back_as_it() -> None:
    text = "ein Satz"
    spans = [(0, 3, "minor", category.key) for category in CATEGORIES]
    lines = []
    for start, end, severity, category in spans:
        written = json.dumps(appraise_spans(text, [(start, end, severity, category)]))
        buffer = io.StringIO()
        row = ["r", "s", "1", "TGT", "de", "en", "0", "d#s", "False", written, "1e9", "1.1e9"]
        csv.writer(buffer, lineterminator="\n").writerow(row)
        lines.append(buffer.getvalue().rstrip("\n"))
    read = parse_appraise_spans("f", lines, 0).rows
    assert [row.text_spans[0][3] for row in read if row.text_spans] == [c.key for c in CATEGORIES]
