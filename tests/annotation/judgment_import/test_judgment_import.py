"""Import of historical judgments: each layout (EvalSite table, Appraise's CSV export, WMT's DA
judgments) stores the same table the core would get from the rows themselves; the report of an
imported campaign imports again to the same analysis; every malformed file is refused with the
file and line named and leaves the database as it was."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import transaction

from annotation.analysis.selectors import campaign_analysis_compute
from annotation.analysis.settings import AnalysisSettings
from annotation.campaigns.uploads import UploadError, UploadFile
from annotation.judgment_import.formats import judgment_file_text, judgments_parse
from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.services import judgments_import
from annotation.models import ItemKind, ItemOutput, JudgmentImport, Task
from annotation.reports.judgments import JUDGMENT_COLUMNS
from annotation.reports.stream import judgment_report_stream
from evalcore.human import TOLERANCE_0_TO_100, analyse_scores
from tests.analysis_factories import make_text_campaign
from tests.factories import PASSWORD
from tests.support.judgment_files import (
    N_SEGMENTS,
    SYSTEMS,
    T0,
    Rows,
    appraise_file,
    evalsite_file,
    expected,
    imported,
    large_file,
    make_rows,
    wmt_file,
)
from tests.support.judgment_import import database_snapshot

pytestmark = pytest.mark.django_db


@pytest.fixture
def texts(owner):  # type: ignore[no-untyped-def]
    campaign, *_ = make_text_campaign(
        owner=owner, n_segments=N_SEGMENTS, system_names=SYSTEMS, name="Past campaign"
    )
    return campaign


@pytest.mark.parametrize(
    ("file_format", "make_file", "name"),
    [
        ("evalsite", evalsite_file, "past.tsv"),
        ("evalsite", lambda rows: evalsite_file(rows, segment_as_line=True), "past-lines.tsv"),
        ("appraise", appraise_file, "scores.csv"),
        ("wmt", wmt_file, "ad-good-raw.csv"),
    ],
)
def test_each_layout_stores_the_table_the_core_gets_from_the_rows(
    texts, owner, file_format, make_file, name
) -> None:  # type: ignore[no-untyped-def]
    rows = make_rows()
    record = judgments_import(campaign=texts, upload=UploadFile(name, make_file(rows)), user=owner)
    assert record.file_format == file_format  # detected
    assert record.summary["judgments"] == len(rows.table)
    got, table, names = imported(texts)
    assert got == expected(rows)
    # One task per HIT, one account per annotator that cannot log in.
    assert Task.objects.filter(config=record.config).count() == 3
    for username in record.summary["annotators"].values():
        user = get_user_model().objects.get(username=username)
        assert not user.has_usable_password()
        assert username.startswith(f"imp-{texts.pk.hex[:8]}-")
        assert texts.annotators.filter(pk=user.pk).exists()
    # QC outputs point to the same annotator's output of the same system and segment.
    for output in ItemOutput.objects.filter(item__task__config=record.config).exclude(
        kind__in=[ItemKind.REAL, ItemKind.REFERENCE]
    ):
        assert output.original.translation_id == output.translation_id
        assert output.item.original_id == output.original.item_id
    # Time on task: per row for our layout and Appraise; WMT's HIT time shared out equally.
    totals = {n: float(table.seconds[table.annotator == i].sum()) for i, n in enumerate(names)}
    for a in range(3):
        total = float(rows.table.seconds[rows.table.annotator == a].sum())
        assert totals[f"worker{a}"] == pytest.approx(total)
    # The analysis of the import is the core's analysis of the rows.
    [criterion] = campaign_analysis_compute(campaign=texts).criteria
    core = analyse_scores(rows.table, tolerance=TOLERANCE_0_TO_100, n_bootstrap=0)
    by_name = dict(zip(names, criterion.annotators, strict=True))
    for a in range(3):
        assert by_name[f"worker{a}"].qc_p == pytest.approx(core.qc.bad_reference.p_value[a])
    assert by_name["worker2"].qc_status == "failed"


def test_appraise_times_and_batches_are_kept(texts, owner) -> None:  # type: ignore[no-untyped-def]
    rows = make_rows()
    record = judgments_import(
        campaign=texts, upload=UploadFile("scores.csv", appraise_file(rows)), user=owner
    )
    judgment = record.config.tasks.get(position=0).items.get(position=0).judgments.get()
    assert judgment.shown_at.timestamp() == pytest.approx(T0)
    assert judgment.seconds == pytest.approx(rows.table.seconds[0])
    assert (judgment.submitted_at - judgment.shown_at).total_seconds() == pytest.approx(
        judgment.seconds
    )
    assert set(record.config.tasks.values_list("position", flat=True)) == {0, 1, 2}
    assert record.summary["tasks"] == 3


def test_the_report_of_an_imported_campaign_imports_again_to_the_same_analysis(
    texts, owner
) -> None:  # type: ignore[no-untyped-def]
    rows = make_rows()
    judgments_import(campaign=texts, upload=UploadFile("past.tsv", evalsite_file(rows)), user=owner)
    report = b"".join(judgment_report_stream(campaign=texts, file_format="tsv", real_names=True))
    lines = report.decode().splitlines()
    assert lines[0].split("\t") == list(JUDGMENT_COLUMNS)
    records = [dict(zip(JUDGMENT_COLUMNS, line.split("\t"), strict=True)) for line in lines[1:]]
    again = judgment_file_text(
        [
            {
                "annotator": r["annotator"].rsplit("-", 1)[1],
                "system": r["system"],
                "segment": f"{r['document']}:{r['segment']}",
                "type": r["item_type"],
                "score": r["raw"],
                "hit": r["task"],
                "seconds": r["seconds"],
                "criterion": r["criterion"],
            }
            for r in records
        ]
    )
    second, *_ = make_text_campaign(
        owner=owner, n_segments=N_SEGMENTS, system_names=SYSTEMS, name="Copy"
    )
    judgments_import(campaign=second, upload=UploadFile("again.tsv", again), user=owner)
    assert imported(second)[0] == imported(texts)[0] == expected(rows)
    settings = AnalysisSettings(resamples=100, seed=3)
    one = campaign_analysis_compute(campaign=texts, settings=settings).criteria[0]
    two = campaign_analysis_compute(campaign=second, settings=settings).criteria[0]
    assert [(s.name, s.score, s.boot_low) for s in one.systems] == [
        (s.name, s.score, s.boot_low) for s in two.systems
    ]
    assert [a.qc_p for a in one.annotators] == [a.qc_p for a in two.annotators]


def test_a_second_import_reuses_the_accounts_and_gets_its_own_protocol(texts, owner) -> None:  # type: ignore[no-untyped-def]
    rows = make_rows()
    first = judgments_import(
        campaign=texts, upload=UploadFile("past.tsv", evalsite_file(rows)), user=owner
    )
    second = judgments_import(
        campaign=texts, upload=UploadFile("past.tsv", evalsite_file(rows)), user=owner
    )
    assert first.summary["annotators"] == second.summary["annotators"]
    assert first.config.name == "Imported: past.tsv"
    assert second.config.name == "Imported: past.tsv (2)"
    assert len(campaign_analysis_compute(campaign=texts).criteria) == 2


def test_ranking_judgments_need_screens_and_keep_them(texts, owner) -> None:  # type: ignore[no-untyped-def]
    rows = [
        {"annotator": "r1", "system": s, "segment": "doc1:1", "type": "SYSTEM", "score": rank,
         "hit": "h", "item": "screen-1"}
        for s, rank in (("nmt", 1), ("pbmt", 2), ("rbmt", 2))
    ] + [
        {"annotator": "r1", "system": s, "segment": "doc1:2", "type": "SYSTEM", "score": rank,
         "hit": "h", "item": "screen-2"}
        for s, rank in (("nmt", 2), ("pbmt", 1))
    ]  # fmt: skip
    record = judgments_import(
        campaign=texts,
        upload=UploadFile("ranks.tsv", judgment_file_text(rows)),
        user=owner,
        options=ImportOptions(protocol="ranking"),
    )
    assert record.config.outputs_per_screen == 3
    [criterion] = campaign_analysis_compute(campaign=texts).criteria
    assert criterion.kind == "ranking"
    ew = {s.name: s.expected_wins for s in criterion.systems}
    assert ew["nmt"] == pytest.approx((1 + 0.5) / 2)  # beat pbmt once, lost once; beat rbmt
    without_items = [{k: v for k, v in r.items() if k != "item"} for r in rows]
    with pytest.raises(UploadError, match="item column"):
        judgments_import(
            campaign=texts,
            upload=UploadFile("ranks.tsv", judgment_file_text(without_items)),
            user=owner,
            options=ImportOptions(protocol="ranking"),
        )


def test_adequacy_and_fluency_come_as_two_criteria_of_one_screen(texts, owner) -> None:  # type: ignore[no-untyped-def]
    rows = [
        {"annotator": "a", "system": "nmt", "segment": "3", "type": "SYSTEM", "score": 4,
         "criterion": "adequacy"},
        {"annotator": "a", "system": "nmt", "segment": "3", "type": "SYSTEM", "score": 5,
         "criterion": "fluency"},
    ]  # fmt: skip
    record = judgments_import(
        campaign=texts,
        upload=UploadFile("af.csv", judgment_file_text(rows, delimiter=",")),
        user=owner,
        options=ImportOptions(protocol="adequacy_fluency"),
    )
    assert record.summary["judgments"] == 1
    assert record.summary["values"] == 2
    assert record.summary["criteria"] == ["adequacy", "fluency"]


# --------------------------------------------------------------------------------------------
# Malformed files: a table of cases


GOOD = "annotator\tsystem\tsegment\ttype\tscore\n"


def text(body: str, header: str = GOOD) -> bytes:
    return (header + body).encode()


MALFORMED: list[tuple[str, str, bytes, dict[str, Any], str]] = [
    ("unknown system", "a.tsv", text("w\tnmt\t1\tSYSTEM\t50\nw\tgoogle\t2\tSYSTEM\t50\n"), {},
     "a.tsv, line 3: unknown system 'google'"),
    ("unknown line", "a.tsv", text("w\tnmt\t21\tSYSTEM\t50\n"), {},
     "a.tsv, line 2: unknown segment: line 21"),
    ("unknown doc:seg", "a.tsv", text("w\tnmt\tdoc9:1\tSYSTEM\t50\n"), {},
     "a.tsv, line 2: unknown segment: doc doc9 seg 1"),
    ("segment not an id", "a.tsv", text("w\tnmt\tfirst\tSYSTEM\t50\n"), {},
     "a.tsv, line 2: segment 'first' is neither"),
    ("score not a number", "a.tsv", text("w\tnmt\t1\tSYSTEM\tgood\n"), {},
     "a.tsv, line 2: score 'good' is not a number"),
    ("score out of scale", "a.tsv", text("w\tnmt\t1\tSYSTEM\t50\nw\tnmt\t2\tSYSTEM\t101\n"), {},
     "a.tsv, line 3: score 101 is outside the score scale 0–100"),
    ("NaN score", "a.tsv", text("w\tnmt\t1\tSYSTEM\tnan\n"), {},
     "a.tsv, line 2: score 'nan' is not a number"),
    ("unknown type", "a.tsv", text("w\tnmt\t1\tGOLD\t50\n"), {},
     "a.tsv, line 2: unknown item type 'GOLD'"),
    ("too few fields", "a.tsv", text("w\tnmt\t1\tSYSTEM\n"), {},
     "a.tsv, line 2: 4 fields, the header has 5"),
    ("missing column", "a.tsv", text("w\tnmt\t1\t50\n", "annotator\tsystem\tsegment\tscore\n"), {},
     "unknown judgments format"),
    ("unknown column", "a.tsv", text("w\tnmt\t1\tSYSTEM\t50\tx\n", GOOD.strip() + "\tcolour\n"),
     {}, "a.tsv, line 1: unknown column(s) colour"),
    ("duplicate judgment", "a.tsv", text("w\tnmt\t1\tSYSTEM\t50\nw\tnmt\t1\tSYSTEM\t60\n"), {},
     "a.tsv, line 3: a second score of the same output by annotator w"),
    ("empty annotator", "a.tsv", text("\tnmt\t1\tSYSTEM\t50\n"), {},
     "a.tsv, line 2: empty annotator"),
    ("negative seconds", "a.tsv",
     text("w\tnmt\t1\tSYSTEM\t50\t-3\n", GOOD.strip() + "\tseconds\n"), {},
     "a.tsv, line 2: seconds '-3' is not a non-negative number"),
    ("unknown criterion", "a.tsv",
     text("w\tnmt\t1\tSYSTEM\t3\tstyle\n", GOOD.strip() + "\tcriterion\n"),
     {"protocol": "adequacy_fluency"}, "a.tsv, line 2: criterion 'style' is not one of"),
    ("unknown run", "a.tsv", text("w\tnmt\t1\tSYSTEM\t50\topt9\n", GOOD.strip() + "\trun\n"), {},
     "a.tsv, line 2: unknown run 'opt9' of system 'nmt'"),
    ("empty file", "a.tsv", b"\n\n", {}, "a.tsv: the file is empty"),
    ("header only", "a.tsv", GOOD.encode(), {}, "a.tsv: the file is empty: no row follows line 1"),
    ("not UTF-8", "a.tsv", GOOD.encode() + "w\tnmt\t1\tSYSTEM\t50 é\n".encode("latin-1"), {},
     "a.tsv, line 2: not valid UTF-8"),
    ("WMT segment scores", "ad-seg-scores-de-en.csv", b"SYS SID RAW.SCR Z.SCR N\nnmt 1 50 0.1 1\n",
     {}, "ad-seg-scores-de-en.csv, line 1: this looks like WMT's segment scores"),
    ("WMT z-scores", "ad-deen-good-stnd.csv",
     b"HITId\tWorkerId\tInput.src\tInput.trg\tInput.item\thit\tsys_id\trid\ttype\tsid\tscore"
     b"\ttime\nH1\tw\tde\ten\tad\t1\tnmt\t0\tSYSTEM\t1\t-0.52\t600\n", {"scores": "raw"},
     "line 2: score -0.52 is outside the score scale 0–100 (a *-good-stnd* file holds z-scores: "
     "import it with scores=standardised"),
    ("standardised score not a number", "ad-deen-good-stnd.csv",
     b"HITId\tWorkerId\tInput.src\tInput.trg\tInput.item\thit\tsys_id\trid\ttype\tsid\tscore"
     b"\ttime\nH1\tw\tde\ten\tad\t1\tnmt\t0\tSYSTEM\t1\t-0.52\t600\n"
     b"H1\tw\tde\ten\tad\t1\tnmt\t0\tSYSTEM\t2\tNA\t600\n", {"scores": "standardised"},
     "ad-deen-good-stnd.csv, line 3: score 'NA' is not a number"),
    ("raw scores with a stray negative", "a.tsv",
     text("w\tnmt\t1\tSYSTEM\t50\nw\tnmt\t2\tSYSTEM\t-3\n"), {},
     "a.tsv, line 3: score -3 is outside the score scale 0–100"),
    ("small whole raw scores with a negative", "a.tsv",
     text("w\tnmt\t1\tSYSTEM\t4\nw\tnmt\t2\tSYSTEM\t-3\n"), {"protocol": "adequacy_fluency"},
     "a.tsv, line 3: score -3 is outside the adequacy scale 1–5"),
    ("standardised ranks", "a.tsv", text("w\tnmt\t1\tSYSTEM\t-0.5\n"),
     {"protocol": "ranking", "scores": "standardised"},
     "a.tsv: ranks are not scores, so they cannot be standardised scores"),
    ("WMT sid not a number", "ad-good-raw.csv",
     b"HITId\tWorkerId\tInput.src\tInput.trg\tInput.item\thit\tsys_id\trid\ttype\tsid\tscore"
     b"\ttime\nH1\tw\tde\ten\tad\t1\tnmt\t0\tSYSTEM\tx1\t50\t600\n", {},
     "ad-good-raw.csv, line 2: sid 'x1' is not a line number"),
    ("several language pairs", "scores.csv",
     b"w,nmt,1,TGT,deu,eng,50,1.0,2.0\nw,nmt,2,TGT,ces,eng,50,3.0,4.0\n", {},
     "scores.csv: the file holds several language pairs (ces-eng (1 rows), deu-eng (1 rows))"),
    ("chosen pair absent", "scores.csv", b"w,nmt,1,TGT,deu,eng,50,1.0,2.0\n",
     {"language_pair": "fr-en"}, "no row is for the language pair fr-en; the file has: deu-eng"),
    ("Appraise end before start", "scores.csv", b"w,nmt,1,TGT,deu,eng,50,9.0,2.0\n", {},
     "scores.csv, line 1: start and end times '9.0', '2.0' are not Unix seconds"),
    ("Appraise field count", "scores.csv",
     b"w,nmt,1,TGT,deu,eng,50,1.0,2.0\nw,nmt,1,TGT,deu,eng,50\n", {},
     "scores.csv, line 2: 7 fields; Appraise's export has 9"),
    ("unknown layout", "notes.txt", b"hello world\n", {}, "notes.txt, line 1: unknown judgments"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "name", "content", "options", "message"),
    MALFORMED,
    ids=[case[0] for case in MALFORMED],
)
def test_a_malformed_file_is_refused_with_file_and_line_and_nothing_is_stored(
    texts, owner, case, name, content, options, message
) -> None:  # type: ignore[no-untyped-def]
    before = database_snapshot()
    with pytest.raises(UploadError) as raised:
        judgments_import(
            campaign=texts,
            upload=UploadFile(name, content),
            user=owner,
            options=ImportOptions(**options),
        )
    assert message in str(raised.value)
    assert database_snapshot() == before


def test_an_error_late_in_the_store_rolls_everything_back(texts, owner) -> None:  # type: ignore[no-untyped-def]
    # A real account already holds the name an imported annotator would get.
    get_user_model().objects.create_user(username=f"imp-{texts.pk.hex[:8]}-w2", password=PASSWORD)
    before = database_snapshot()
    content = text("w1\tnmt\t1\tSYSTEM\t50\nw2\tnmt\t2\tSYSTEM\t40\n")
    with pytest.raises(UploadError, match="belongs to an account that can log in"):
        judgments_import(campaign=texts, upload=UploadFile("a.tsv", content), user=owner)
    assert database_snapshot() == before


def test_an_import_announces_new_data_after_its_commit_and_a_refused_one_does_not(
    texts, owner, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    from annotation.signals import campaign_data_changed

    heard: list[Any] = []

    def listener(sender: Any, campaign_id: Any, **kwargs: Any) -> None:
        # As the metrics app listens: act only once the writing transaction has committed.
        transaction.on_commit(lambda: heard.append((sender, campaign_id)))

    campaign_data_changed.connect(listener, dispatch_uid="test-import-listener")
    try:
        # Refused late, while storing (an account already holds an imported annotator's name).
        get_user_model().objects.create_user(
            username=f"imp-{texts.pk.hex[:8]}-w2", password=PASSWORD
        )
        late_error = text("w1\tnmt\t1\tSYSTEM\t50\nw2\tnmt\t2\tSYSTEM\t40\n")
        with django_capture_on_commit_callbacks(execute=True), pytest.raises(UploadError):
            judgments_import(campaign=texts, upload=UploadFile("a.tsv", late_error), user=owner)
        assert heard == []
        good = UploadFile("past.tsv", evalsite_file(make_rows()))
        with django_capture_on_commit_callbacks(execute=True):
            judgments_import(campaign=texts, upload=good, user=owner)
        assert heard == [(JudgmentImport, texts.pk)]
    finally:
        campaign_data_changed.disconnect(dispatch_uid="test-import-listener")


def test_a_campaign_without_texts_cannot_take_judgments(owner) -> None:  # type: ignore[no-untyped-def]
    from tests.factories import make_campaign

    empty = make_campaign(owner=owner, name="Empty")
    with pytest.raises(UploadError, match="has no texts yet"):
        judgments_import(
            campaign=empty,
            upload=UploadFile("a.tsv", text("w\tnmt\t1\tSYSTEM\t50\n")),
            user=owner,
        )


def test_qc_rows_whose_original_is_missing_get_an_unjudged_original(texts, owner) -> None:  # type: ignore[no-untyped-def]
    content = text("w\tnmt\t1\tREPEAT\t50\nw\t\tdoc1:2\tREF\t95\n")
    record = judgments_import(campaign=texts, upload=UploadFile("a.tsv", content), user=owner)
    items = {i.kind: i for i in Task.objects.get(config=record.config).items.all()}
    assert set(items) == {ItemKind.REAL, ItemKind.REPEAT, ItemKind.REFERENCE}
    placeholders = Task.objects.get(config=record.config).items.filter(kind=ItemKind.REAL)
    assert all(not p.judgments.exists() for p in placeholders)
    [criterion] = campaign_analysis_compute(campaign=texts).criteria
    assert criterion.annotators[0].repeats_n == 0  # nothing to compare the repeat with
    assert criterion.annotators[0].references_n == 1


def test_parsing_reads_quoted_csv_and_a_bom(owner) -> None:  # type: ignore[no-untyped-def]
    content = '\ufeffannotator,system,segment,type,score\n"w, senior",nmt,1,SYSTEM,50\n'
    parsed = judgments_parse(UploadFile("a.csv", content.encode()), max_bytes=10_000)
    assert parsed.rows[0].annotator == "w, senior"


# --------------------------------------------------------------------------------------------
# Command, page and API


def test_the_command_imports_and_fails_with_status_2(texts, tmp_path) -> None:  # type: ignore[no-untyped-def]
    rows = make_rows()
    path = tmp_path / "ad-good-raw.csv"
    path.write_bytes(wmt_file(rows))
    out = io.StringIO()
    call_command("import_judgments", str(texts.pk), str(path), "--name", "WMT past", stdout=out)
    assert "imported 120 judgments" in out.getvalue()
    # A progress bar: one line per step as it starts, then a full bar.
    bars = [line.split("] ")[1].split(" (")[0] for line in out.getvalue().splitlines()[:-1]]
    assert bars == [
        "1/5 Reading the file",
        "2/5 Checking it against the campaign",
        "3/5 Writing tasks and items",
        "4/5 Writing the shown outputs",
        "5/5 Writing the judgments",
        "done",
    ]
    assert JudgmentImport.objects.get(campaign=texts).config.name == "WMT past"
    bad = tmp_path / "bad.tsv"
    bad.write_bytes(text("w\tgoogle\t1\tSYSTEM\t50\n"))
    with pytest.raises(CommandError) as raised:
        call_command("import_judgments", str(texts.pk), str(bad))
    assert raised.value.returncode == 2
    assert "bad.tsv, line 2: unknown system 'google'" in str(raised.value)


@pytest.mark.parametrize("make_file", [evalsite_file, appraise_file, wmt_file])
def test_rows_of_the_careless_annotator_are_kept_but_flagged(
    texts, owner, make_file: Callable[[Rows], bytes]
) -> None:
    judgments_import(campaign=texts, upload=UploadFile("f.csv", make_file(make_rows())), user=owner)
    [criterion] = campaign_analysis_compute(campaign=texts).criteria
    statuses = sorted(a.qc_status for a in criterion.annotators)
    assert statuses == ["failed", "passed", "passed"]


def _values_by_task(record: JudgmentImport) -> dict[int, list[tuple[Any, ...]]]:
    """The stored values of each task as file rows (who, what, type, score, seconds)."""
    from annotation.models import JudgmentValue

    type_of_kind = {
        ItemKind.REAL: "SYSTEM",
        ItemKind.REPEAT: "REPEAT",
        ItemKind.BAD_REFERENCE: "BAD_REF",
        ItemKind.REFERENCE: "REF",
    }
    values = list(
        JudgmentValue.objects.filter(judgment__item__task__config=record.config).select_related(
            "judgment__annotator",
            "judgment__item__segment__document",
            "output__system",
            "output__translation",
            "output__reference",
        )
    )
    # Every row of the file is one value of its own screen, per HIT: who, what, type, score,
    # seconds; the HITs are the tasks.
    by_task: dict[int, list[tuple[Any, ...]]] = {}
    for v in values:
        j, o = v.judgment, v.output
        segment = f"{j.item.segment.document.external_id}:{j.item.segment.external_id}"
        by_task.setdefault(j.item.task_id, []).append(
            (
                j.annotator.username.rsplit("-", 1)[1],
                o.system.name if o.system else "",
                segment,
                type_of_kind[o.kind],
                v.value,
                j.seconds,
            )
        )
        assert v.criterion == "score"
        # What the annotator saw: the translation, the reference, nothing for a bad reference.
        if o.kind == ItemKind.REFERENCE:
            assert o.reference is not None
            assert o.text == o.reference.text
        elif o.kind == ItemKind.BAD_REFERENCE:
            assert o.text == ""
            assert o.translation is not None
        else:
            assert o.translation is not None
            assert o.text == o.translation.text
    return by_task


def _check_the_judgments(record: JudgmentImport, n_rows: int) -> None:
    from annotation.models import Judgment

    # The stored answers say what the values say; one judgment per screen.
    judgments = Judgment.objects.filter(item__task__config=record.config)
    assert judgments.count() == n_rows
    for j in judgments.prefetch_related("values"):
        assert j.answer == {str(v.output_id): {v.criterion: v.value} for v in j.values.all()}
        assert j.revision == 1
        assert j.assignment.annotator_id == j.annotator_id
        assert j.assignment.task_id == j.item.task_id
    assert judgments.values("submission_id").distinct().count() == n_rows


def _check_the_qc_copies(record: JudgmentImport, n_rows: int) -> None:
    from annotation.models import Item

    # QC screens copy a real screen of the same segment; their outputs copy its output.
    items = Item.objects.filter(task__config=record.config).select_related("original")
    real_outputs = {
        o.item_id: o for o in ItemOutput.objects.filter(item__task__config=record.config)
    }
    n_placeholders = elsewhere = 0
    for item in items:
        output = real_outputs[item.pk]
        if item.kind == ItemKind.REAL:
            assert item.original is None
            assert output.original_id is None
            n_placeholders += not item.judgments.exists()
            continue
        original = item.original
        assert original is not None
        assert original.kind == ItemKind.REAL
        assert original.segment_id == item.segment_id
        elsewhere += original.task_id != item.task_id
        if item.kind == ItemKind.REFERENCE:
            assert output.original_id is None
        else:
            assert output.original_id == real_outputs[original.pk].pk
            assert output.translation_id == real_outputs[original.pk].translation_id
    # Some QC rows had no SYSTEM row in their HIT: they copy the annotator's in another HIT,
    # or an unjudged original.
    assert n_placeholders > 0
    assert elsewhere > 0
    assert items.count() == n_rows + n_placeholders == record.summary["items"]


def test_a_large_import_stores_every_row_of_the_file_and_nothing_else(owner) -> None:  # type: ignore[no-untyped-def]
    from annotation.models import Assignment

    campaign, *_ = make_text_campaign(
        owner=owner, n_segments=200, system_names=[f"s{k}" for k in range(5)], name="Large"
    )
    content, rows = large_file()
    record = judgments_import(campaign=campaign, upload=UploadFile("big.tsv", content), user=owner)
    assert record.summary["rows"] == record.summary["values"] == len(rows) > 2_900

    by_task = _values_by_task(record)
    by_hit: dict[str, list[tuple[Any, ...]]] = {}
    for a, h, s, g, t, x, sec in rows:
        by_hit.setdefault(h, []).append((a, s, g, t, float(x), sec))
    assert sorted(sorted(r) for r in by_task.values()) == sorted(sorted(r) for r in by_hit.values())
    _check_the_judgments(record, len(rows))
    _check_the_qc_copies(record, len(rows))
    for task in Task.objects.filter(config=record.config):
        positions = sorted(task.items.values_list("position", flat=True))
        assert positions == list(range(task.size))

    # One finished assignment per annotator and HIT, with the number of screens judged.
    done = {
        (a.task_id, a.annotator.username.rsplit("-", 1)[1]): a
        for a in Assignment.objects.filter(task__config=record.config).select_related("annotator")
    }
    assert len(done) == len(by_hit) == 30
    for (task_id, annotator), assignment in done.items():
        assert assignment.status == Assignment.Status.DONE
        assert assignment.items_done == len(by_task[task_id])
        assert {r[0] for r in by_task[task_id]} == {annotator}
