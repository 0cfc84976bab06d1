"""Judgment files of a past campaign in each layout the import reads (EvalSite's table,
Appraise's CSV export, WMT's DA judgments), made from a table of judgments, and the stored
criterion read back as rows that compare with the table whatever the order and codes."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.contrib.auth import get_user_model

from annotation.analysis.tables import campaign_criteria, criterion_table_load
from annotation.judgment_import.formats import judgment_file_text
from annotation.models import Segment, System
from evalcore.human import Judgments

SYSTEMS = ["nmt", "pbmt", "rbmt"]
N_SEGMENTS = 20
TYPE_NAMES = {0: "SYSTEM", 1: "REPEAT", 2: "REF", 3: "BAD_REF"}
APPRAISE_NAMES = {0: "TGT", 1: "CHK", 2: "REF", 3: "BAD"}
T0 = 1_500_000_000.0


@dataclass
class Rows:
    """A table of judgments as a file would hold them, with the core's table of the same."""

    table: Judgments
    hit: list[str]

    def segment_id(self, row: int) -> str:
        seg = int(self.table.segment[row])
        return f"doc{seg // 10 + 1}:{seg % 10 + 1}"

    def system(self, row: int) -> str:
        code = int(self.table.system[row])
        return SYSTEMS[code] if code < len(SYSTEMS) else ""


def make_rows(seed: int = 5) -> Rows:
    """Three annotators (the last careless), each one HIT of 30 real outputs (no output twice),
    5 bad references and 3 repeats of their first real rows, 2 references; 0–100 scores."""
    rng = np.random.default_rng(seed)
    quality = np.array([75.0, 60.0, 45.0])
    names = ("annotator", "segment", "system", "score", "type", "original", "seconds")
    columns: dict[str, list[Any]] = {k: [] for k in names}
    hits = []

    def add(
        annotator: int, segment: int, system: int, score: float, kind: int, original: int
    ) -> None:
        careless = annotator == 2
        value = rng.uniform(0, 100) if careless else score + rng.normal(0, 8)
        row = (annotator, segment, system, float(np.clip(np.round(value), 0, 100)), kind, original)
        for key, cell in zip(names, row, strict=False):
            columns[key].append(cell)
        columns["seconds"].append(float(rng.integers(5, 60)))
        hits.append(f"hit-{annotator}")

    for a in range(3):
        outputs = rng.permutation(N_SEGMENTS * len(SYSTEMS))[:30]
        start = len(columns["score"])
        for output in outputs:
            segment, system = divmod(int(output), len(SYSTEMS))
            add(a, segment, system, quality[system], 0, -1)
        for row in range(start, start + 5):
            add(a, columns["segment"][row], columns["system"][row], 20.0, 3, row)
        for row in range(start + 5, start + 8):
            system = columns["system"][row]
            add(a, columns["segment"][row], system, quality[system], 1, row)
        for row in range(start + 8, start + 10):
            add(a, columns["segment"][row], len(SYSTEMS), 90.0, 2, -1)
    table = Judgments.from_arrays(
        annotator=columns["annotator"],
        segment=columns["segment"],
        system=columns["system"],
        score=columns["score"],
        item_type=columns["type"],
        original=columns["original"],
        seconds=columns["seconds"],
        n_systems=len(SYSTEMS) + 1,
    )
    return Rows(table=table, hit=hits)


def evalsite_file(rows: Rows, *, segment_as_line: bool = False) -> bytes:
    t = rows.table
    return judgment_file_text(
        [
            {
                "annotator": f"worker{int(t.annotator[i])}",
                "system": rows.system(i),
                "segment": str(int(t.segment[i]) + 1) if segment_as_line else rows.segment_id(i),
                "type": TYPE_NAMES[int(t.item_type[i])],
                "score": f"{t.score[i]:g}",
                "hit": rows.hit[i],
                "seconds": f"{t.seconds[i]:g}",
            }
            for i in range(len(t))
        ]
    )


def appraise_file(rows: Rows) -> bytes:
    t = rows.table
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    clock = T0
    for i in range(len(t)):
        start, clock = clock, clock + float(t.seconds[i])
        writer.writerow(
            [
                f"worker{int(t.annotator[i])}",
                rows.system(i) or "REF",
                int(t.segment[i]) + 1,
                APPRAISE_NAMES[int(t.item_type[i])],
                "deu",
                "eng",
                int(t.score[i]),
                f"{start:.3f}",
                f"{clock:.3f}",
                rows.hit[i],
                i,
            ]
        )
    return out.getvalue().encode()


def wmt_file(rows: Rows) -> bytes:
    t = rows.table
    header = "\t".join(
        [
            "HITId",
            "WorkerId",
            "Input.src",
            "Input.trg",
            "Input.item",
            "hit",
            "sys_id",
            "rid",
            "type",
            "sid",
            "score",
            "time",
        ]
    )
    hit_time = {
        a: float(t.seconds[t.annotator == a].sum()) for a in np.unique(t.annotator).tolist()
    }
    lines = [header]
    for i in range(len(t)):
        a = int(t.annotator[i])
        lines.append(
            "\t".join(
                [
                    rows.hit[i],
                    f"worker{a}",
                    "de",
                    "en",
                    "ad",
                    str(a),
                    rows.system(i) or "_ref",
                    str(i % 100),
                    TYPE_NAMES[int(t.item_type[i])],
                    str(int(t.segment[i]) + 1),
                    f"{int(t.score[i])}",
                    f"{hit_time[a]:g}",
                ]
            )
        )
    return ("\n".join(lines) + "\n").encode()


def canonical(
    table: Judgments, annotators: list[str], segments: list[int], systems: list[str]
) -> list[tuple[Any, ...]]:
    """Rows as comparable tuples, whatever their order and codes: who, which segment (by
    position) and system (by name), type, score, and the same of the row's original."""

    def key(i: int) -> tuple[Any, ...]:
        return (
            annotators[int(table.annotator[i])],
            segments[int(table.segment[i])],
            systems[int(table.system[i])],
            int(table.item_type[i]),
            float(table.score[i]),
        )

    return sorted(
        (*key(i), key(int(table.original[i])) if table.original[i] >= 0 else None)
        for i in range(len(table))
    )


def expected(rows: Rows) -> list[tuple[Any, ...]]:
    return canonical(
        rows.table, [f"worker{a}" for a in range(3)], list(range(N_SEGMENTS)), [*SYSTEMS, "REF"]
    )


def imported(campaign: Any) -> tuple[list[tuple[Any, ...]], Judgments, list[str]]:
    """The campaign's one criterion as canonical rows, its table and annotator names."""
    [(config, criterion)] = campaign_criteria(campaign=campaign)
    table = criterion_table_load(config=config, criterion=criterion)
    users = dict(
        get_user_model().objects.filter(pk__in=table.annotator_ids).values_list("pk", "username")
    )
    # "imp-<campaign>-worker0" → "worker0"
    names = [users[int(pk)].rsplit("-", 1)[1] for pk in table.annotator_ids]
    positions = dict(Segment.objects.values_list("pk", "position"))
    system_names = dict(System.objects.values_list("pk", "name"))
    rows = canonical(
        table.judgments,
        names,
        [positions[int(pk)] for pk in table.segment_ids],
        [system_names.get(int(pk), "REF") for pk in table.system_ids],
    )
    return rows, table.judgments, names


def large_file(seed: int = 11) -> tuple[bytes, list[tuple[str, str, str, str, str, int, float]]]:
    """3,000 rows in 30 HITs by 6 annotators: per HIT 60 SYSTEM rows of distinct outputs, 15
    REPEAT and 15 BAD_REF rows of some of them, 10 REF rows on their segments; a few SYSTEM
    rows left out, so that some QC rows copy another HIT's or an unjudged original."""
    rng = np.random.default_rng(seed)
    n_segments, n_systems = 200, 5
    rows: list[tuple[str, str, str, str, str, int, float]] = []
    for hit in range(30):
        annotator, name = f"w{hit % 6}", f"h{hit}"
        outputs = rng.choice(n_segments * n_systems, 60, replace=False)
        shown = [
            (f"s{o % n_systems}", f"doc{o // n_systems // 10 + 1}:{o // n_systems % 10 + 1}")
            for o in outputs
        ]
        picks = rng.choice(60, 40, replace=False)
        kinds = ["SYSTEM"] * 60 + ["REPEAT"] * 15 + ["BAD_REF"] * 15 + ["REF"] * 10
        targets = (
            list(shown) + [shown[p] for p in picks[:30]] + [("", shown[p][1]) for p in picks[30:]]
        )
        for kind, (system, segment) in zip(kinds, targets, strict=True):
            if kind == "SYSTEM" and rng.random() < 0.03:
                continue
            score = int(rng.integers(0, 101))
            rows.append(
                (annotator, name, system, segment, kind, score, round(float(rng.uniform(2, 60)), 1))
            )
    table = judgment_file_text(
        [
            {
                "annotator": a,
                "hit": h,
                "system": s,
                "segment": g,
                "type": t,
                "score": x,
                "seconds": sec,
            }
            for a, h, s, g, t, x, sec in rows
        ]
    )
    return table, rows
