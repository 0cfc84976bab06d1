"""WMT21's Flores DA (zu-xh, the smallest pair) imported onto its XML test set uploaded in its
own order: the release's sids count documents after sorting them by id, so under that numbering
each judgment sits on the segment the release's published segment scores name, every system mean
is the published raw score, and the DA scores follow a metric on the judged outputs; the XML's
own order is refused, and ``auto`` finds the numbering itself.

The data is read from shared/data/wmt21-flores-da/ (never copied into the repository), found as
tests/support/shared_data.py says."""

from __future__ import annotations

import gzip
import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from statistics import fmean
from typing import Any

import pytest
import sacrebleu
from scipy.stats import pearsonr

from annotation.campaigns.uploads import UploadError, UploadFile
from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.services import judgments_import
from annotation.reports.judgments import JUDGMENT_COLUMNS
from annotation.reports.stream import judgment_report_stream
from tests.factories import make_user
from tests.support.wmt21_flores import FLORES, MISSING, flores_campaign, flores_xml, wmt_system

pytestmark = pytest.mark.django_db

PAIR = "zu-xh"
SID = re.compile(rf"^{PAIR}-\d+-(\d+)-\d+\.(\d+)_\d+$")

if FLORES is None:
    pytest.skip(MISSING, allow_module_level=True)
DATA: Path = FLORES


def _da_file() -> UploadFile:
    return UploadFile(
        "ad-good-raw.csv", gzip.decompress((DATA / "humaneval/ad-good-raw.csv.gz").read_bytes())
    )


def _published_segment_scores() -> dict[tuple[str, str], float]:
    """ad-seg-scores-zu-xh.csv: (system, sid) → the raw score (one judgment each here)."""
    lines = (DATA / "humaneval" / f"ad-seg-scores-{PAIR}.csv").read_text().splitlines()
    return {(wmt_system(f[0]), f[1]): float(f[2]) for f in (line.split() for line in lines[1:])}


def _published_system_scores() -> dict[str, tuple[float, int]]:
    """ad-sys-scores-zu-xh.csv: system → (raw mean, N)."""
    lines = (DATA / "humaneval" / f"ad-sys-scores-{PAIR}.csv").read_text().splitlines()
    rows = (line.split() for line in lines[1:])
    return {wmt_system(f[3]): (float(f[0]), int(f[2])) for f in rows}


def _documents() -> dict[str, tuple[list[str], dict[str, list[str]]]]:
    """The XML's documents: id → (references, each system's outputs)."""
    found = {}
    for doc in ET.fromstring(flores_xml(PAIR)).iter("doc"):
        refs = [seg.text or "" for seg in doc.find("ref").iter("seg")]  # type: ignore[union-attr]
        hyps = {
            h.get("system", ""): [s.text or "" for s in h.iter("seg")] for h in doc.findall("hyp")
        }
        found[doc.get("id", "")] = (refs, hyps)
    return found


@pytest.fixture
def campaign() -> Any:
    return flores_campaign(PAIR, make_user("wmt21-importer", organizer=True))


def _options(numbering: str) -> ImportOptions:
    systems = {
        f"{name}.{n}": name
        for name, n in (
            ("GTCOM", 3),
            ("HuaweiTSC", 0),
            ("MS-EgDC", 4),
            ("Online-G", 1),
            ("TRANSSION", 2),
        )
    }
    return ImportOptions(
        file_format="wmt", language_pair=PAIR, system_map=systems, segment_numbering=numbering
    )


def _judged(campaign: Any) -> list[dict[str, str]]:
    report = b"".join(judgment_report_stream(campaign=campaign, file_format="tsv", real_names=True))
    lines = report.decode().splitlines()
    return [dict(zip(JUDGMENT_COLUMNS, line.split("\t"), strict=True)) for line in lines[1:]]


def test_sorted_numbering_puts_every_judgment_where_the_published_scores_do(campaign: Any) -> None:
    record = judgments_import(
        campaign=campaign, upload=_da_file(), user=None, options=_options("sorted")
    )
    assert record.summary["judgments"] == 2502
    assert record.summary["segment_numbering"]["applied"] == "sorted"
    assert record.options["segment_numbering"] == "sorted"
    # The published segment scores, each sid read as "the n-th document by id, its m-th segment".
    by_id = sorted(_documents())
    published = sorted(
        (system, by_id[int(SID.match(sid)[1]) - 1], SID.match(sid)[2], score)  # type: ignore[index]
        for (system, sid), score in _published_segment_scores().items()
    )
    judged = _judged(campaign)
    assert (
        sorted((r["system"], r["document"], r["segment"], float(r["raw"])) for r in judged)
        == published
    )
    # The first row of the file: zu-xh-0-39-1000689.1_1, Online-G, 15.
    assert ("Online-G", by_id[38], "1", 15.0) in published


def test_the_system_means_are_the_published_raw_scores(campaign: Any) -> None:
    judgments_import(campaign=campaign, upload=_da_file(), user=None, options=_options("sorted"))
    scores: dict[str, list[float]] = defaultdict(list)
    for row in _judged(campaign):
        scores[row["system"]].append(float(row["raw"]))
    ours = {system: (fmean(values), len(values)) for system, values in scores.items()}
    published = _published_system_scores()
    assert ours.keys() == published.keys()
    for system, (mean, n) in published.items():
        assert ours[system][1] == n
        assert ours[system][0] == pytest.approx(mean, abs=1e-9)


def test_the_judged_outputs_are_whole_documents_whose_scores_follow_chrf(campaign: Any) -> None:
    """An external check of the placement: the judged outputs' sentence chrF against the
    reference correlates with the DA scores (0.41; 0.26 on the segments the XML's order
    would name), and each system's judged documents are judged whole."""
    judgments_import(campaign=campaign, upload=_da_file(), user=None, options=_options("sorted"))
    documents = _documents()
    judged = _judged(campaign)
    chrf = [
        sacrebleu.sentence_chrf(
            documents[r["document"]][1][r["system"]][int(r["segment"]) - 1],
            [documents[r["document"]][0][int(r["segment"]) - 1]],
        ).score
        for r in judged
    ]
    assert pearsonr(chrf, [float(r["raw"]) for r in judged])[0] > 0.35
    segments: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in judged:
        segments[(r["system"], r["document"])].add(r["segment"])
    assert all(len(s) == len(documents[doc][0]) for (_, doc), s in segments.items())


def test_the_xml_order_is_refused_naming_the_numbering_that_fits(campaign: Any) -> None:
    with pytest.raises(UploadError) as refused:
        judgments_import(
            campaign=campaign, upload=_da_file(), user=None, options=_options("upload")
        )
    message = str(refused.value.problems[0])
    assert "outside the campaign's test set under the segment numbering upload" in message
    assert "the segment numbering sorted places every row" in message


def test_auto_finds_the_sorted_numbering_and_says_which_checks_ran(campaign: Any) -> None:
    record = judgments_import(
        campaign=campaign, upload=_da_file(), user=None, options=_options("auto")
    )
    numbering = record.summary["segment_numbering"]
    assert (numbering["chosen"], numbering["applied"], numbering["warnings"]) == (
        "auto",
        "sorted",
        [],
    )
    assert numbering["checks"] == [
        "upload: 406 rows outside the test set, 182 of 683 judged documents covered exactly",
        "sorted: 0 rows outside the test set, 683 of 683 judged documents covered exactly",
    ]
