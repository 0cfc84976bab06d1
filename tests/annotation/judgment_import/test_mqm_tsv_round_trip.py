"""Google's MQM TSV read back: a generated file (many errors per output, several on the same
words or the same start, source errors and unmarked ones on the missing-content marker, every
category of MQM's typology in Google's names and some of Google's finer ones, No-error rows,
texts that begin like spreadsheet formulas) is imported, exported as ``spans.mqm.tsv`` and the
export imported onto a second campaign with the same texts: every judgment, span, severity,
category and score, and every system's MQM, comes back, and the file's own MQM is kept."""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotation.campaigns.services import campaign_data_import
from annotation.campaigns.uploads import UploadFile
from annotation.judgment_import.mqm_tsv import (
    GOOGLE_CATEGORIES,
    google_cell,
    google_cell_read,
    mqm_category,
)
from annotation.judgment_import.rows import SYSTEM, ImportRow
from annotation.judgment_import.services import judgments_import
from annotation.judgment_import.text_spans import texts_unneutralised
from annotation.models import Campaign, JudgmentSpan, JudgmentValue
from annotation.protocols.mqm import CATEGORIES
from annotation.reports.spans import mqm_tsv
from evalsite.formatting import FORMULA_STARTS
from tests.factories import lines, make_campaign, make_config, make_user
from tests.support.screens import answer_every_screen

HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity"
WORDS = ["Haus", "klein", "über", "Straße", "中文", "😀", "a", "bc", "x.", "—", "'s", "=1", "-"]
SYSTEMS = ("sys-a", "sys-b", "sys-c")
RATERS = ("rater1", "rater2", "rater3")
SEGMENTS = 10
# Google's names beyond the export's: read as the typology's category (the parent).
FINER = [
    "Style/Awkward",
    "Terminology/Inappropriate for context",
    "Locale convention/Currency format",
    "Accuracy/Source language fragment",
]
CATEGORY_NAMES = [*GOOGLE_CATEGORIES.values(), *FINER]
GOOGLE_WEIGHTS = {"Major": 5.0, "Minor": 1.0, "Neutral": 0.0}
# Texts that begin like a formula: the export neutralises them, the import undoes it.
FORMULA_TEXTS = ["=HYPERLINK(x)", "-5 Grad", "+1 mehr", "@jemand", "'=schon", "''-zwei"]

Judgments = dict[tuple[str, str, int], tuple[float, list[tuple[int, int, str, str]]]]


def _text(rng: np.random.Generator, n: int) -> str:
    if n < len(FORMULA_TEXTS):
        return FORMULA_TEXTS[n] + " " + " ".join(rng.choice(WORDS, size=3))
    return " ".join(rng.choice(WORDS, size=int(rng.integers(1, 9))))


def texts(seed: int) -> tuple[list[str], dict[str, list[str]]]:
    rng = np.random.default_rng(seed)
    sources = [_text(rng, n) for n in range(SEGMENTS)]
    outputs = {
        s: [_text(rng, (n + k) % SEGMENTS) for n in range(SEGMENTS)] for k, s in enumerate(SYSTEMS)
    }
    return sources, outputs


def campaign_with(seed: int, name: str) -> Campaign:
    owner = make_user(f"mqm-round-{name}", organizer=True)
    campaign = make_campaign(owner=owner, name=name)
    sources, outputs = texts(seed)
    files = [
        UploadFile("src.de", lines(sources), "source"),
        UploadFile("docs.txt", lines([f"d{n // 4}" for n in range(SEGMENTS)]), "doc_ids"),
    ]
    files += [UploadFile(f"{s}.txt", lines(outputs[s]), "systems") for s in SYSTEMS]
    campaign_data_import(campaign=campaign, files=files, user=owner)
    return campaign


def _marked(text: str, start: int, end: int) -> str:
    return text[:start] + "<v>" + text[start:end] + "</v>" + text[end:]


def _error(rng: np.random.Generator, source: str, target: str, starts: list[int]) -> tuple:
    """One error: (source cell, target cell, category, severity, expected span)."""
    category = str(rng.choice(CATEGORY_NAMES))
    severity = str(rng.choice(list(GOOGLE_WEIGHTS)))
    kind = rng.integers(0, 5)
    missing = (len(target), len(target) + 1)
    if kind == 0:  # marked in the source: stored on the missing-content marker
        start = int(rng.integers(0, len(source)))
        return _marked(source, start, len(source)), target, category, severity, missing
    if kind == 1:  # marked nowhere
        return source, target, category, severity, missing
    # On the target, sometimes where an earlier error of the same rater starts.
    start = int(rng.choice(starts)) if starts and kind == 2 else int(rng.integers(0, len(target)))
    end = int(rng.integers(start + 1, len(target) + 1))
    starts.append(start)
    return source, _marked(target, start, end), category, severity, (start, end)


def google_file(seed: int) -> tuple[str, Judgments]:
    """A file in Google's layout and the judgments it holds, worked out by hand."""
    rng = np.random.default_rng(seed + 1)
    sources, outputs = texts(seed)
    rows, expected = [HEADER], {}
    for rater in RATERS:
        for system in SYSTEMS:
            for seg in rng.choice(SEGMENTS, size=7, replace=False):
                source, target = sources[seg], outputs[system][seg]
                head = [system, f"d{seg // 4}", str(seg % 4 + 1), str(seg + 1), rater]
                starts: list[int] = []
                errors = [_error(rng, source, target, starts) for _ in range(rng.integers(0, 6))]
                if not errors:
                    rows.append("\t".join([*head, source, target, "No-error", "No-error"]))
                for src, tgt, category, severity, _span in errors:
                    rows.append("\t".join([*head, src, tgt, category, severity]))
                score = sum(_weight(category, severity) for *_, category, severity, _ in errors)
                spans = sorted((*e[4], e[3].lower(), str(mqm_category(e[2]))) for e in errors)
                expected[(rater, system, int(seg) + 1)] = (-score, spans)
    return "\n".join(rows) + "\n", expected


def _weight(category: str, severity: str) -> float:
    if category == "Non-translation!":
        return 25.0
    if category == "Fluency/Punctuation" and severity == "Minor":
        return 0.1
    return GOOGLE_WEIGHTS[severity]


def _imported(username: str) -> str:
    """The rater an imported judgment's account stands for (``imp-<campaign>-<rater>``)."""
    return username.split("-", 2)[2]


def stored(
    campaign: Campaign, rater: Callable[[str], str] = _imported, config: Any = None
) -> Judgments:
    """Per (rater, system, seg_id): the stored MQM and the spans, in order (of one config)."""
    where = {"judgment__item__task__config": config} if config else {}
    spans: dict[int, list[tuple[int, int, str, str]]] = defaultdict(list)
    for judgment, start, end, severity, category in JudgmentSpan.objects.filter(
        judgment__item__task__config__campaign=campaign, **where
    ).values_list("judgment_id", "start", "end", "severity", "category"):
        spans[judgment].append((start, end, severity, category))
    found: Judgments = {}
    for judgment, user, system, position, value in JudgmentValue.objects.filter(
        judgment__item__task__config__campaign=campaign, criterion="mqm", **where
    ).values_list(
        "judgment_id",
        "judgment__annotator__username",
        "output__system__name",
        "judgment__item__segment__position",
        "value",
    ):
        key = (rater(user), system, position + 1)
        found[key] = (value, sorted(spans[judgment]))
    return found


def export(campaign: Campaign) -> str:
    labels = {
        pk: name.split("-", 2)[2] for pk, name in campaign.annotators.values_list("pk", "username")
    }
    return "".join(mqm_tsv(campaign=campaign, labels=labels))


def system_mqm(judgments: Judgments) -> dict[str, float]:
    by_system: dict[str, list[float]] = defaultdict(list)
    for (_rater, system, _seg), (score, _spans) in judgments.items():
        by_system[system].append(score)
    return {system: sum(v) / len(v) for system, v in by_system.items()}


@pytest.mark.django_db
@pytest.mark.parametrize("seed", [11, 2024])
def test_an_exported_google_file_reads_back_to_the_same_judgments(seed: int) -> None:
    text, expected = google_file(seed)
    first = campaign_with(seed, f"first {seed}")
    judgments_import(campaign=first, upload=UploadFile("mqm.tsv", text.encode(), ""), user=None)
    imported = stored(first)
    assert _same(imported, expected)
    written = export(first)
    assert written.count("\n") == text.count("\n")
    cells = [cell for line in written.splitlines()[1:] for cell in line.split("\t")]
    assert not [c for c in cells if c.startswith(("=", "+", "-", "@"))]
    assert any(c.startswith("'=HYPERLINK(x) ") for c in cells)
    # A text that begins with an apostrophe already is written as it is, and read so.
    assert any(c.startswith("''-zwei ") for c in cells)
    again = campaign_with(seed, f"again {seed}")
    judgments_import(campaign=again, upload=UploadFile("back.tsv", written.encode(), ""), user=None)
    assert _same(stored(again), imported)
    assert system_mqm(stored(again)) == pytest.approx(system_mqm(expected))
    assert export(again) == written


def _same(found: Judgments, wanted: Judgments) -> bool:
    assert set(found) == set(wanted)
    for key, (score, spans) in wanted.items():
        assert found[key][0] == pytest.approx(score), key
        assert found[key][1] == spans, key
    return True


@given(st.text())
def test_a_name_cell_reads_back_to_the_name(name: str) -> None:
    cell = google_cell(name)
    assert not cell.startswith(FORMULA_STARTS)
    assert google_cell_read(cell) == name


def test_an_apostrophe_is_dropped_only_where_the_campaigns_text_confirms_it() -> None:
    row = ImportRow(
        line=2,
        annotator="r",
        system="s",
        segment="1",
        type=SYSTEM,
        score=-1.0,
        source_text="'-1 Grad",
        output_text="'=x y",
        spans=((3, 4, "minor", "style"), (5, 6, "major", "other")),
    )
    read = texts_unneutralised(row, "-1 Grad", "=x y")
    assert (read.source_text, read.output_text) == ("-1 Grad", "=x y")
    assert read.spans == ((2, 3, "minor", "style"), (4, 5, "major", "other"))
    # The campaign's own text begins with the apostrophe, or with no formula character.
    assert texts_unneutralised(row, "'-1 Grad", "'=x y") == row
    plain = replace(row, source_text="'s Haus", output_text="'s house")
    assert texts_unneutralised(plain, "s Haus", "s house") == plain


def _marks(rng: np.random.Generator, text: str) -> list[dict[str, Any]]:
    """Up to five spans that do not overlap (as an annotator's), the marker among them."""
    cuts = sorted({int(c) for c in rng.integers(0, len(text) + 1, size=8)})
    pairs = [(a, b) for a, b in itertools.pairwise(cuts) if a < b][::2]
    pairs += [(len(text), len(text) + 1)] if rng.random() < 0.3 else []
    chosen = [pairs[i] for i in sorted(rng.permutation(len(pairs))[: rng.integers(0, 6)])]
    return [
        {
            "start": start,
            "end": end,
            "severity": str(rng.choice(["major", "minor", "neutral"])),
            "category": CATEGORIES[int(rng.integers(0, len(CATEGORIES)))].key,
        }
        for start, end in chosen
    ]


def judge_all(campaign: Campaign, raters: list[Any], rng: np.random.Generator, name: str) -> None:
    """Every task of a new MQM config of ``campaign`` judged by ``raters`` with random spans."""
    config = make_config(
        campaign,
        "mqm",
        name=name,
        outputs_per_screen=1,
        items_per_task=10,
        annotations_per_task=2,
        qc_bad_reference=0,
        qc_repeat=0,
        qc_reference=0,
    )
    for rater in raters:
        answer_every_screen(config, rater, lambda o: {"spans": _marks(rng, o.text)})


@pytest.mark.django_db
@pytest.mark.parametrize("configs", [1, 2])
def test_annotators_judgments_read_back_from_the_export(configs: int) -> None:
    """One MQM config, or two judged by the same annotators (the second's raters are written
    ``<rater>@<config>``, so that each judgment reads back as its own)."""
    rng = np.random.default_rng(7)
    campaign = campaign_with(5, "judged")
    raters = [make_user(f"mqm-judge{n}") for n in range(2)]
    campaign.annotators.add(*raters)
    for n in range(configs):
        judge_all(campaign, raters, rng, f"mqm-{n + 1}")
    labels = dict(campaign.annotators.values_list("pk", "username"))
    written = "".join(mqm_tsv(campaign=campaign, labels=labels))
    again = campaign_with(5, "judged again")
    judgments_import(campaign=again, upload=UploadFile("back.tsv", written.encode(), ""), user=None)
    judged = stored_by_config(campaign)
    assert sum(len(spans) for _score, spans in judged.values()) > 20 * configs
    assert _same(stored(again), judged)
    assert system_mqm(stored(again)) == pytest.approx(system_mqm(judged))


def stored_by_config(campaign: Campaign) -> Judgments:
    """``stored``, the raters of the second config named as the export names them."""
    found: Judgments = {}
    for n, config in enumerate(campaign.protocols.order_by("pk")):
        suffix = f"@{config.name}" if n else ""
        found.update(
            {
                (rater + suffix, system, seg): judged
                for (rater, system, seg), judged in stored(
                    campaign, lambda user: user, config=config
                ).items()
            }
        )
    return found
