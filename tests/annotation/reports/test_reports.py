"""Reports: the normalised judgment report of a small hand-made campaign, row for row against the
database and against normalisation computed independently (scipy.stats.zscore with ddof=1);
streamed in chunks; the same rows as CSV, TSV and JSONL; pseudonyms by default; the system
report as CSV, JSON and LaTeX (balanced, escaped) and the annotator report."""

from __future__ import annotations

import csv
import io
import json
import re
import uuid
from datetime import timedelta
from email.message import Message
from email.utils import collapse_rfc2231_value
from typing import Any

import numpy as np
import pytest
from django.http import StreamingHttpResponse
from django.test import Client
from django.urls import reverse
from scipy import stats

from annotation.analysis.selectors import campaign_analysis_compute
from annotation.analysis.services import annotator_pseudonyms_ensure
from annotation.analysis.settings import DEFAULT_SEED, AnalysisSettings
from annotation.models import (
    AnnotatorPseudonym,
    Assignment,
    Item,
    Judgment,
    JudgmentValue,
)
from annotation.reports import judgments
from annotation.reports.annotators import ANNOTATOR_COLUMNS, annotator_report_csv
from annotation.reports.judgments import JUDGMENT_COLUMNS, annotator_labels, float_text
from annotation.reports.stream import judgment_report_stream
from annotation.reports.systems import (
    SYSTEM_COLUMNS,
    system_report_csv,
    system_report_json,
    system_report_latex,
)
from evalcore.human import Judgments, synthetic_scores
from evalcore.latex import latex_escape
from tests.analysis_factories import START, build_judged_campaign
from tests.factories import PASSWORD, make_user

pytestmark = pytest.mark.django_db

REAL, REPEAT, REF, BAD = 0, 1, 2, 3
SYSTEMS = ["sys_A & co", "B#2 {50%}"]
# annotator, segment, system (2 = the reference), score, type, original row, seconds
HAND = [
    (0, 0, 0, 70, REAL, -1, 12),
    (0, 0, 1, 40, REAL, -1, 20),
    (0, 1, 0, 80, REAL, -1, 9),
    (0, 1, 1, 50, REAL, -1, 31),
    (0, 0, 0, 30, BAD, 0, 14),
    (0, 1, 1, 55, REPEAT, 3, 8),
    (0, 2, 2, 95, REF, -1, 5),
    (0, 2, 0, 60, REAL, -1, 17),
    (1, 0, 0, 90, REAL, -1, 11),
    (1, 0, 1, 85, REAL, -1, 10),
    (1, 1, 0, 88, REAL, -1, 12),
    (1, 2, 1, 70, REAL, -1, 13),
    (1, 0, 1, 60, BAD, 9, 14),
    (1, 1, 0, 90, REPEAT, 10, 15),
    (1, 1, 2, 100, REF, -1, 16),
    (2, 0, 0, 50, REAL, -1, 40),  # one score for everything: σ = 0, no z
    (2, 1, 1, 50, REAL, -1, 41),
]
TYPE = {REAL: "SYSTEM", REPEAT: "REPEAT", REF: "REF", BAD: "BAD_REF"}


def hand_table() -> Judgments:
    columns = list(zip(*HAND, strict=True))
    return Judgments.from_arrays(
        annotator=columns[0],
        segment=columns[1],
        system=columns[2],
        score=columns[3],
        item_type=columns[4],
        original=columns[5],
        seconds=columns[6],
        n_systems=3,
    )


@pytest.fixture
def hand(owner):  # type: ignore[no-untyped-def]
    built = build_judged_campaign(
        owner=owner,
        judgments=hand_table(),
        system_names=SYSTEMS,
        usernames=["ana", "ben", "cy"],
        campaign_name="Hand, made",
    )
    annotator_pseudonyms_ensure(campaign=built.campaign)
    return built


def independent_normalisation() -> tuple[list[float], list[float | None]]:
    """Shifted and z of every HAND row from scipy, over each annotator's REAL and REPEAT rows."""
    scores = np.array([r[3] for r in HAND], dtype=float)
    annotator = np.array([r[0] for r in HAND])
    basis = np.isin([r[4] for r in HAND], [REAL, REPEAT])
    global_mean = scores[basis].mean()
    shifted: list[float] = []
    z: list[float | None] = []
    for i, x in enumerate(scores):
        own = basis & (annotator == annotator[i])
        values = scores[own]
        shifted.append(float(x + global_mean - values.mean()))
        sd = values.std(ddof=1)
        if sd == 0:
            z.append(None)
        elif basis[i]:
            # scipy's z of this very row among the annotator's basis rows
            position = int(np.flatnonzero(own).tolist().index(i))
            z.append(float(stats.zscore(values, ddof=1)[position]))
        else:
            z.append(float((x - values.mean()) / sd))
    return shifted, z


def expected_rows() -> list[dict[str, str]]:
    """The report as the hand table says it must be, in the report's order."""
    shifted, z = independent_normalisation()
    rows = []
    position: dict[int, int] = {}
    clock: dict[int, Any] = {}
    for i, (a, seg, system, score, kind, _, seconds) in enumerate(HAND):
        item = position.get(a, 0)
        position[a] = item + 1
        shown = clock.get(a, START)
        submitted = shown + timedelta(seconds=seconds)
        clock[a] = submitted
        rows.append(
            {
                "campaign": "Hand, made",
                "protocol": "Main",
                "protocol_type": "direct_assessment",
                "task": str(a + 1),
                "item": str(item + 1),
                "output": "1",
                "document": "doc1",
                "segment": str(seg + 1),
                "line": str(seg + 1),
                "system": SYSTEMS[system] if system < 2 else "",
                "run": "main" if system < 2 else "",
                "merged": "",  # no two systems produced the same text
                "annotator": f"A{a + 1:03d}",
                "item_type": TYPE[kind],
                "criterion": "score",
                "raw": str(score),  # as PostgreSQL prints a double: 70, not 70.0
                "shifted": shifted[i],
                "z": z[i],
                "qc_status": "untested",  # one bad-reference pair each: no test
                "included": "1",
                "started": shown.isoformat(timespec="microseconds"),
                "submitted": submitted.isoformat(timespec="microseconds"),
                "seconds": str(seconds),
                # Direct assessment marks no spans and has no other answer parts.
                "spans": "",
                "answer": "",
            }
        )
    return sorted(rows, key=lambda r: (int(r["task"]), int(r["item"])))


def read_csv(content: bytes, delimiter: str = ",") -> tuple[list[str], list[dict[str, str]]]:
    reader = csv.reader(io.StringIO(content.decode()), delimiter=delimiter)
    header = next(reader)
    return header, [dict(zip(header, row, strict=True)) for row in reader]


def assert_rows_match(got: list[dict[str, Any]]) -> None:
    expected = expected_rows()
    assert len(got) == len(expected)
    for row, want in zip(got, expected, strict=True):
        for key in JUDGMENT_COLUMNS:
            if key in ("shifted", "z"):
                if want[key] is None:
                    assert row[key] in ("", None), (key, row)
                else:
                    assert float(row[key]) == pytest.approx(want[key], abs=1e-12), (key, row)
            else:
                assert str(row[key]) == want[key], (key, row, want)


def test_the_judgment_report_has_every_column_and_row_as_the_database_and_scipy_say(hand) -> None:  # type: ignore[no-untyped-def]
    content = b"".join(judgment_report_stream(campaign=hand.campaign, file_format="csv"))
    header, rows = read_csv(content)
    assert header == list(JUDGMENT_COLUMNS)
    assert_rows_match(rows)


def test_csv_tsv_and_jsonl_hold_the_same_rows_in_the_same_order(hand) -> None:  # type: ignore[no-untyped-def]
    csv_rows = read_csv(
        b"".join(judgment_report_stream(campaign=hand.campaign, file_format="csv"))
    )[1]
    tsv_header, tsv_rows = read_csv(
        b"".join(judgment_report_stream(campaign=hand.campaign, file_format="tsv")), "\t"
    )
    assert tsv_header == list(JUDGMENT_COLUMNS)
    assert tsv_rows == csv_rows
    lines = b"".join(judgment_report_stream(campaign=hand.campaign, file_format="jsonl"))
    records = [json.loads(line) for line in lines.decode().splitlines()]
    assert [list(r) for r in records] == [list(JUDGMENT_COLUMNS)] * len(records)
    assert records[0]["included"] is True
    assert isinstance(records[0]["raw"], float)
    as_text = [
        {
            k: ("" if v is None else "1" if v is True else "0" if v is False else str(v))
            for k, v in r.items()
        }
        for r in records
    ]
    for row in as_text:
        for key in ("raw", "shifted", "z", "seconds"):
            row[key] = float_text(float(row[key])) if row[key] else ""
    assert as_text == csv_rows
    assert_rows_match(as_text)


def test_the_report_is_produced_in_chunks_and_is_the_same_every_time(hand) -> None:  # type: ignore[no-untyped-def]
    chunks = list(judgment_report_stream(campaign=hand.campaign, file_format="csv", chunk_size=4))
    assert len(chunks) == 1 + 5  # header, then 17 rows in chunks of 4
    again = b"".join(judgment_report_stream(campaign=hand.campaign, file_format="csv"))
    assert b"".join(chunks) == again


def test_a_tab_or_newline_in_a_name_cannot_break_a_tsv_row(hand) -> None:  # type: ignore[no-untyped-def]
    hand.campaign.name = "Tab\there\nand a line"
    hand.campaign.save()
    content = b"".join(judgment_report_stream(campaign=hand.campaign, file_format="tsv"))
    lines = content.decode().splitlines()
    assert len(lines) == 1 + len(HAND)
    assert {len(line.split("\t")) for line in lines} == {len(JUDGMENT_COLUMNS)}


def login(user: Any) -> Client:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


@pytest.mark.parametrize("url_name", ["campaign_report_judgments", "api-campaign-report-judgments"])
@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl"])
def test_the_download_is_streamed(hand, owner, url_name, fmt) -> None:  # type: ignore[no-untyped-def]
    response = login(owner).get(reverse(url_name, args=[hand.campaign.pk, fmt]))
    assert response.status_code == 200
    assert isinstance(response, StreamingHttpResponse)
    assert response["Content-Disposition"] == f'attachment; filename="hand-made-judgments.{fmt}"'
    content = b"".join(response.streaming_content)
    assert content == b"".join(judgment_report_stream(campaign=hand.campaign, file_format=fmt))


@pytest.mark.parametrize(
    ("name", "ascii_name", "written"),
    [
        ("Ärger & Co", "arger-co", "ärger-co"),
        ("Évaluation finale", "evaluation-finale", "évaluation-finale"),
        ("日本語 test", "test", "日本語-test"),
        ("a" * 39 + " b", "a" * 39, None),  # cut at 40 characters, no hyphen left at the end
        ("!!!", "campaign", None),
    ],
)
@pytest.mark.parametrize(
    ("url_name", "args", "file"),
    [
        ("campaign_report_judgments", ["csv"], "judgments.csv"),
        ("api-campaign-report-judgments", ["tsv"], "judgments.tsv"),
        ("campaign_report_systems", ["tex"], "systems.tex"),
        ("api-campaign-report-annotators", [], "annotators.csv"),
    ],
)
def test_download_names_keep_the_campaigns_letters(  # type: ignore[no-untyped-def]
    hand, owner, name, ascii_name, written, url_name, args, file
) -> None:
    # Accented and other non-ASCII letters were dropped ("rger-co-judgments.csv",
    # "-test-judgments.csv"). Now every client gets an ASCII name, and one that reads RFC 6266's
    # filename* the name as written.
    hand.campaign.name = name
    hand.campaign.save()
    response = login(owner).get(reverse(url_name, args=[hand.campaign.pk, *args]))
    assert response.status_code == 200
    header = Message()
    header["Content-Disposition"] = response["Content-Disposition"]
    assert header.get_content_disposition() == "attachment"
    # The email package parses RFC 2231's filename*, which RFC 6266 takes over for HTTP.
    names = [v for k, v in header.get_params(header="content-disposition")[1:] if k == "filename"]
    assert names[0] == f"{ascii_name}-{file}"
    if written is None:
        assert len(names) == 1
    else:
        assert len(names) == 2
        assert collapse_rfc2231_value(names[1]) == f"{written}-{file}"


def test_annotators_are_pseudonymous_unless_an_organizer_asks_for_names(hand, owner) -> None:  # type: ignore[no-untyped-def]
    client = login(owner)
    url = reverse("campaign_report_judgments", args=[hand.campaign.pk, "csv"])
    pseudonymous = b"".join(client.get(url).streaming_content).decode()
    assert "A001" in pseudonymous
    assert "ana" not in pseudonymous
    named = b"".join(client.get(url, {"names": "real"}).streaming_content).decode()
    assert {row["annotator"] for row in read_csv(named.encode())[1]} == {"ana", "ben", "cy"}
    annotators = client.get(reverse("campaign_report_annotators", args=[hand.campaign.pk]))
    assert "ben" not in annotators.content.decode()


def judge_as_newcomer(hand, username: str = "dee"):  # type: ignore[no-untyped-def]
    """A new annotator's first judgment in the hand campaign (a score of 66), not numbered."""
    dee = make_user(username)
    item = Item.objects.filter(task__config=hand.config).order_by("pk").first()
    assert item is not None
    output = item.outputs.get()
    assignment = Assignment.objects.create(
        task=item.task,
        annotator=dee,
        status=Assignment.Status.DONE,
        origin=Assignment.Origin.PUSH,
        claimed_at=START,
    )
    judgment = Judgment.objects.create(
        item=item,
        annotator=dee,
        assignment=assignment,
        submission_id=uuid.uuid4(),
        answer={str(output.pk): {"score": 66.0}},
        submitted_at=START,
    )
    JudgmentValue.objects.create(judgment=judgment, output=output, criterion="score", value=66)
    return dee


def test_pseudonyms_never_change_when_annotators_join(hand, owner) -> None:  # type: ignore[no-untyped-def]
    before = annotator_labels(campaign=hand.campaign)
    assert sorted(before.values()) == ["A001", "A002", "A003"]
    dee = judge_as_newcomer(hand)
    numbers = annotator_pseudonyms_ensure(campaign=hand.campaign)
    after = annotator_labels(campaign=hand.campaign)
    assert {k: v for k, v in after.items() if k in before} == before
    assert after[dee.pk] == "A004"
    assert numbers[dee.pk] == 4
    assert AnnotatorPseudonym.objects.filter(campaign=hand.campaign).count() == 4


@pytest.mark.parametrize(("fmt", "python_text"), [("csv", False), ("tsv", True), ("jsonl", False)])
def test_a_report_numbers_an_annotator_who_judged_after_the_numbering(  # type: ignore[no-untyped-def]
    hand, fmt, python_text
) -> None:
    """The download view numbers the annotators, then the report reads its snapshot: a first
    judgment landing in between is named by its new pseudonym, never by the user id."""
    dee = judge_as_newcomer(hand)
    content = b"".join(
        judgment_report_stream(campaign=hand.campaign, file_format=fmt, python_text=python_text)
    )
    if fmt == "jsonl":
        annotators = [json.loads(line)["annotator"] for line in content.decode().splitlines()]
    else:
        annotators = [r["annotator"] for r in read_csv(content, "," if fmt == "csv" else "\t")[1]]
    assert annotators.count("A004") == 1
    assert str(dee.pk) not in annotators
    assert set(annotators) == {"A001", "A002", "A003", "A004"}
    assert annotator_labels(campaign=hand.campaign)[dee.pk] == "A004"


def test_a_report_gives_up_numbering_after_its_attempts(hand, monkeypatch, caplog) -> None:  # type: ignore[no-untyped-def]
    """Newcomers arriving before every snapshot (here: numbering that never lands) cannot keep
    a report from finishing: after its attempts it names them by user id, with a warning."""
    dee = judge_as_newcomer(hand)
    calls: list[frozenset[int]] = []
    monkeypatch.setattr(
        judgments, "annotator_pseudonyms_ensure", lambda *, campaign, judged: calls.append(judged)
    )
    content = b"".join(judgment_report_stream(campaign=hand.campaign, file_format="csv"))
    assert str(dee.pk) in {r["annotator"] for r in read_csv(content)[1]}
    assert len(calls) == judgments.REPORT_LABEL_ATTEMPTS - 1
    assert all(dee.pk in judged for judged in calls)
    assert "names 1 annotators by user id" in caplog.text


def test_the_analysis_numbers_an_annotator_who_judged_after_the_numbering(hand) -> None:  # type: ignore[no-untyped-def]
    dee = judge_as_newcomer(hand)
    analysis = campaign_analysis_compute(campaign=hand.campaign)
    pseudonyms = {a.annotator_id: a.pseudonym for a in analysis.criteria[0].annotators}
    assert pseudonyms[dee.pk] == "A004"
    assert sorted(pseudonyms.values()) == ["A001", "A002", "A003", "A004"]


# --------------------------------------------------------------------------------------------
# System and annotator reports


@pytest.fixture
def synthetic(owner):  # type: ignore[no-untyped-def]
    table = synthetic_scores(
        n_annotators=5, n_systems=3, n_segments=30, tasks_per_annotator=2, careless=[4], seed=9
    ).judgments
    built = build_judged_campaign(
        owner=owner, judgments=table, system_names=["x_1 & co", "50% {y}", "z#3"]
    )
    annotator_pseudonyms_ensure(campaign=built.campaign)
    return built


def test_the_system_report_lists_scores_intervals_ranks_and_clusters(synthetic) -> None:  # type: ignore[no-untyped-def]
    analysis = campaign_analysis_compute(
        campaign=synthetic.campaign, settings=AnalysisSettings(resamples=200)
    )
    header, rows = read_csv(system_report_csv(analysis).encode())
    assert header == list(SYSTEM_COLUMNS)
    assert [r["system"] for r in rows] == [s.name for s in analysis.criteria[0].systems]
    assert [r["position"] for r in rows] == ["1", "2", "3"]
    first = rows[0]
    assert float(first["t_low"]) < float(first["score"]) < float(first["t_high"])
    assert first["space"] == "z"
    assert first["significance_test"] == "wilcoxon"
    assert first["resamples"] == "200"
    assert first["trueskill_runs"] == ""
    assert first["seed"] == str(DEFAULT_SEED)
    assert first["version"].startswith("evalsite ")
    data = system_report_json(analysis)
    [criterion] = data["criteria"]
    assert "annotators" not in criterion
    assert {"systems", "significance", "agreement", "method"} <= set(criterion)
    assert criterion["significance"]["systems"] == [r["system"] for r in rows]
    assert data["settings"]["resamples"] == 200
    json.dumps(data, allow_nan=False)  # strict JSON: no NaN


def unescaped(text: str, char: str) -> int:
    return len(re.findall(r"(?<!\\)" + re.escape(char), text))


def test_the_latex_table_is_balanced_and_escapes_system_names(synthetic) -> None:  # type: ignore[no-untyped-def]
    analysis = campaign_analysis_compute(campaign=synthetic.campaign)
    latex = system_report_latex(analysis)
    assert latex.count(r"\begin{tabular}") == latex.count(r"\end{tabular}") == 1
    assert latex.count(r"\begin{table}") == latex.count(r"\end{table}") == 1
    assert unescaped(latex, "{") == unescaped(latex, "}")
    body = latex[latex.index(r"\toprule") : latex.index(r"\bottomrule")]
    rows = [line for line in body.splitlines() if line.endswith(r"\\")]
    assert len(rows) == 1 + 3  # header and three systems
    assert {unescaped(row, "&") for row in rows} == {7}  # eight columns
    spec = re.search(r"\\begin\{tabular\}\{(\w+)\}", latex)
    assert spec is not None
    assert len(spec.group(1)) == 8
    assert r"x\_1 \& co" in latex
    assert r"50\% \{y\}" in latex
    assert r"z\#3" in latex
    assert "x_1 & co" not in latex
    assert latex_escape("a\\b~^") == r"a\textbackslash{}b\textasciitilde{}\textasciicircum{}"
    # OT1, pdfLaTeX's default font encoding, prints these as ¡, ¿ and a dash; line breaks of
    # any kind would end the row's source line.
    assert latex_escape("a<b>c|d") == r"a\textless{}b\textgreater{}c\textbar{}d"
    assert latex_escape("one\r\ntwo\rthree\u2028four") == "one two three four"


def test_the_latex_table_names_the_confidence_level_it_was_computed_at(synthetic) -> None:  # type: ignore[no-untyped-def]
    for confidence, label in [(0.95, "95"), (0.8, "80"), (0.975, "97.5"), (0.999, "99.9")]:
        analysis = campaign_analysis_compute(
            campaign=synthetic.campaign,
            settings=AnalysisSettings(confidence=confidence, resamples=0, seed=4),
        )
        latex = system_report_latex(analysis)
        assert f"Score & {label}\\% CI & Raw" in latex
        assert f"with {label}\\% t interval" in latex
        if label != "95":
            assert "95\\%" not in latex


def test_the_annotator_report_has_qc_repeats_and_time(synthetic, hand) -> None:  # type: ignore[no-untyped-def]
    analysis = campaign_analysis_compute(campaign=synthetic.campaign)
    labels = annotator_labels(campaign=synthetic.campaign)
    header, rows = read_csv(annotator_report_csv(analysis, labels).encode())
    assert header == list(ANNOTATOR_COLUMNS)
    assert [r["annotator"] for r in rows] == ["A001", "A002", "A003", "A004", "A005"]
    assert rows[4]["qc_status"] == "failed"
    assert rows[4]["included"] == "0"
    assert {r["qc_status"] for r in rows[:4]} == {"passed"}
    assert all(int(r["qc_pairs"]) == 20 for r in rows)
    assert all(float(r["seconds_on_task"]) > 0 for r in rows)
    assert rows[0]["repeat_tolerance"] == "10"
    # σ = 0 is reported as degenerate, never divided by.
    hand_analysis = campaign_analysis_compute(campaign=hand.campaign)
    _, hand_rows = read_csv(
        annotator_report_csv(hand_analysis, annotator_labels(campaign=hand.campaign)).encode()
    )
    assert [r["degenerate"] for r in hand_rows] == ["0", "0", "1"]
    assert hand_rows[2]["sd"] == "0"


@pytest.mark.parametrize(
    ("url_name", "fmt"),
    [
        ("campaign_report_systems", "csv"),
        ("campaign_report_systems", "json"),
        ("campaign_report_systems", "tex"),
        ("api-campaign-report-systems", "tex"),
    ],
)
def test_the_system_report_downloads(synthetic, owner, url_name, fmt) -> None:  # type: ignore[no-untyped-def]
    response = login(owner).get(
        reverse(url_name, args=[synthetic.campaign.pk, fmt]), {"resamples": "100", "seed": "4"}
    )
    assert response.status_code == 200
    analysis = campaign_analysis_compute(
        campaign=synthetic.campaign, settings=AnalysisSettings(resamples=100, seed=4)
    )
    if fmt == "csv":
        assert response.content.decode() == system_report_csv(analysis)
    elif fmt == "json":
        assert response.json() == json.loads(json.dumps(system_report_json(analysis)))
    else:
        # The file names where its numbers come from, as the response header does.
        origin = response["X-EvalSite-Analysis"]
        assert origin.startswith("computed for this request at ")
        assert response.content.decode() == system_report_latex(analysis, provenance=origin)


def test_bad_settings_are_refused_by_the_api_and_ignored_by_the_page(synthetic, owner) -> None:  # type: ignore[no-untyped-def]
    client = login(owner)
    api = client.get(
        reverse("api-campaign-analysis", args=[synthetic.campaign.pk]), {"qc_test": "guess"}
    )
    assert api.status_code == 400
    assert "qc_test" in api.json()
    page = client.get(reverse("campaign_analysis", args=[synthetic.campaign.pk]), {"alpha": "2"})
    assert page.status_code == 200
    assert "errorlist" in page.content.decode()


@pytest.mark.parametrize(("fmt", "delimiter"), [("csv", ","), ("tsv", "\t")])
def test_the_database_writes_the_same_text_as_python_even_for_awkward_names(
    hand, fmt, delimiter
) -> None:  # type: ignore[no-untyped-def]
    awkward = 'q"uo,te\nline\ttab'
    hand.systems[0].name = awkward
    hand.systems[0].save()
    hand.segments[0].document.external_id = "doc, one"
    hand.segments[0].document.save()
    by_database = b"".join(judgment_report_stream(campaign=hand.campaign, file_format=fmt))
    by_python = b"".join(
        judgment_report_stream(campaign=hand.campaign, file_format=fmt, python_text=True)
    )
    assert by_database == by_python
    if fmt == "csv":
        _, rows = read_csv(by_database)
        assert awkward in {r["system"] for r in rows}
        assert {r["document"] for r in rows} == {"doc, one"}
    else:
        lines = by_database.decode().split("\n")[:-1]
        assert {len(line.split("\t")) for line in lines} == {len(JUDGMENT_COLUMNS)}
        # A field with a quote is quoted, as Python's excel-tab dialect writes it.
        assert '"q""uo,te line tab"' in by_database.decode()


@pytest.mark.parametrize("python_text", [False, True])
@pytest.mark.parametrize("name", ['"Best" MT', '"Open-quote MT', 'mid"quote', "plain, MT"])
def test_tab_separated_readers_read_every_name_back(hand, name, python_text) -> None:  # type: ignore[no-untyped-def]
    # A field that begins with a quote is a quoted field to pandas, R's read.delim, spreadsheets
    # and Python's csv module: unquoted, '"Best" MT' read back as 'Best MT', and '"Open-quote
    # MT' swallowed every row after it into one field.
    hand.systems[0].name = name
    hand.systems[0].save()
    content = b"".join(
        judgment_report_stream(campaign=hand.campaign, file_format="tsv", python_text=python_text)
    ).decode()
    rows = list(csv.DictReader(io.StringIO(content, newline=""), delimiter="\t"))
    assert len(rows) == len(HAND)
    assert name in {r["system"] for r in rows}
    assert {len(r) for r in rows} == {len(JUDGMENT_COLUMNS)}
    # Exactly the text Python's csv module writes for the rows it read.
    again = io.StringIO()
    writer = csv.writer(again, dialect="excel-tab", lineterminator="\n")
    writer.writerow(JUDGMENT_COLUMNS)
    writer.writerows([r[c] for c in JUDGMENT_COLUMNS] for r in rows)
    assert again.getvalue() == content
