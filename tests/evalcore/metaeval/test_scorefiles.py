"""mt-metrics-eval's score files and WMT's published DA system scores: read as written, refused
with file and line when malformed; system names matched or reported."""

from __future__ import annotations

import math

import pytest

from evalcore.metaeval.scorefiles import (
    ScoreFileError,
    match_system_names,
    read_seg_scores,
    read_sys_scores,
    read_wmt_ad_sys_scores,
    rename_systems,
)


def test_sys_scores_are_read_in_file_order(tmp_path):
    path = tmp_path / "COMET.sys.score"
    path.write_text("Online-A\t0.49\nGTCOM\t-0.5\n\nref-B\t1e-3\n")
    assert read_sys_scores(path) == {"Online-A": 0.49, "GTCOM": -0.5, "ref-B": 0.001}
    assert list(read_sys_scores(path)) == ["Online-A", "GTCOM", "ref-B"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("A\t1\nB 2\n", "line 2: expected 'system<TAB>score', got 1"),
        ("A\t1\nB\t2\t3\n", "line 2: expected 'system<TAB>score', got 3"),
        ("A\t1\nB\tabc\n", "line 2: 'abc' is not a number"),
        ("A\tnan\n", "line 1: the score 'nan' is not finite"),
        ("A\t1\nA\t2\n", "line 2: system 'A' is listed twice"),
    ],
)
def test_a_malformed_sys_file_is_refused_with_file_and_line(text, reason):
    with pytest.raises(ScoreFileError, match=f"^BLEU.sys.score, {reason}"):
        read_sys_scores("BLEU.sys.score", text=text)


def test_seg_scores_keep_segment_order_and_none_as_missing():
    scores = read_seg_scores("mqm.seg.score", text="A\t1\nA\tNone\nA\t3\nB\t4\nB\t5\nB\t6\n")
    assert scores["B"] == [4.0, 5.0, 6.0]
    assert scores["A"][0] == 1.0
    assert math.isnan(scores["A"][1])
    assert scores["A"][2] == 3.0


def test_seg_files_with_uneven_or_interleaved_systems_are_refused():
    with pytest.raises(ScoreFileError, match=r"different numbers of segments \(A: 2, B: 1\)"):
        read_seg_scores("x.seg.score", text="A\t1\nA\t2\nB\t3\n")
    with pytest.raises(ScoreFileError, match="line 3: the lines of system 'A' are not contiguous"):
        read_seg_scores("x.seg.score", text="A\t1\nB\t2\nA\t3\nB\t4\n")


def test_wmt_published_scores_read_either_column_and_refuse_a_short_row():
    text = (
        "RAW.SCR Z.SCR N SYS N.ALL \n77.96 0.054 500 UEdin.4 500 \n70.75 -0.37 497 Online-G.7 497\n"
    )
    assert read_wmt_ad_sys_scores("s.csv", text=text) == {"UEdin.4": 0.054, "Online-G.7": -0.37}
    assert read_wmt_ad_sys_scores("s.csv", text=text, column="RAW.SCR")["UEdin.4"] == 77.96
    with pytest.raises(ScoreFileError, match=r"s\.csv, line 3: expected 5 fields, got 4"):
        read_wmt_ad_sys_scores("s.csv", text=text.replace(" 497\n", "\n"))
    with pytest.raises(ScoreFileError, match="line 1: expected the header"):
        read_wmt_ad_sys_scores("s.csv", text="SYS Z\nA 1\n")


def test_names_match_exactly_or_without_the_submission_id_and_the_rest_is_reported():
    match = match_system_names(
        ["GTCOM.0", "UEdin.4", "ref-A", "Lonely.3", "Twin.1", "Twin.2"],
        ["GTCOM", "UEdin", "ref-A", "Other", "Twin"],
    )
    assert match.pairs == {"ref-A": "ref-A", "GTCOM.0": "GTCOM", "UEdin.4": "UEdin"}
    # Two human names strip to Twin: ambiguous, so neither is matched.
    assert match.human_only == ("Lonely.3", "Twin.1", "Twin.2")
    assert match.metric_only == ("Other", "Twin")
    assert rename_systems({"GTCOM.0": 0.2, "Lonely.3": 0.1}, match.pairs) == {"GTCOM": 0.2}
