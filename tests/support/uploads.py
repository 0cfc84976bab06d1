"""The upload tests' shared data: good files in every form, and snapshots of the database to
compare around a failed import."""

from __future__ import annotations

import json
from collections.abc import Callable

from django.apps import apps

from annotation.campaigns.uploads import UploadFile
from annotation.models import Campaign, Run, Segment, Translation
from tests.factories import (
    DOC_IDS,
    REF_A,
    REF_B,
    SOURCE,
    SYSTEMS,
    plain_files,
)

GOOD_FORMS: dict[str, Callable[[], list[UploadFile]]] = {
    "plain text": plain_files,
    "TSV": lambda: [UploadFile("all.tsv", tsv(tsv_rows()), "data")],
    "JSONL": lambda: [UploadFile("all.jsonl", jsonl(jsonl_lines()), "data")],
    "WMT XML": lambda: xml(xml_dataset()),
    "WMT XML in two files": lambda: [
        UploadFile("src-ref.xml", xml_dataset(hyps=False).encode(), "data"),
        UploadFile(
            "hyps.xml",
            xml_dataset()
            .replace('<src lang="de">', '<junk lang="de">')
            .replace("</src>", "</junk>")
            .replace("<ref ", "<junk ")
            .replace("</ref>", "</junk>")
            .encode(),
            "data",
        ),
    ],
    "TSV with BOM and CRLF": lambda: [
        UploadFile("all.tsv", b"\xef\xbb\xbf" + tsv(tsv_rows()).replace(b"\n", b"\r\n"), "data")
    ],
    "JSONL with BOM and CRLF": lambda: [
        UploadFile(
            "all.jsonl", b"\xef\xbb\xbf" + jsonl(jsonl_lines()).replace(b"\n", b"\r\n"), "data"
        )
    ],
    "WMT XML with BOM and CRLF": lambda: [
        UploadFile(
            "test.xml", b"\xef\xbb\xbf" + xml_dataset().encode().replace(b"\n", b"\r\n"), "data"
        )
    ],
    "plain text with BOM and CRLF": lambda: [
        UploadFile(f.name, b"\xef\xbb\xbf" + f.content.replace(b"\n", b"\r\n"), f.role)
        for f in plain_files()
    ],
}


def database_snapshot() -> dict[str, list[tuple[object, ...]]]:
    """Every row of every model of the app, all columns: equal before and after a failed import
    (so an in-place change, not only an added or lost row, would show)."""
    return {
        model.__name__: list(model.objects.order_by("pk").values_list())
        for model in apps.get_app_config("annotation").get_models()
    }


def campaign_dump(campaign: Campaign) -> dict[str, object]:
    """The campaign's data without ids or labels: what every form must agree on."""
    segments = [
        (
            s.document.external_id,
            s.external_id,
            s.position,
            s.source,
            [r.text for r in s.references.all()],
        )
        for s in Segment.objects.filter(campaign=campaign)
        .select_related("document")
        .prefetch_related("references")
        .order_by("position")
    ]
    outputs = {
        f"{run.system.name}/{run.name}": [
            t.text for t in Translation.objects.filter(run=run).order_by("segment__position")
        ]
        for run in Run.objects.filter(system__campaign=campaign).select_related("system")
    }
    return {"segments": segments, "outputs": outputs}


def tsv(rows: list[list[str]], header: str | None = None) -> bytes:
    head = header or "doc_id\tseg_id\tsource\treference_1\treference_2\tsystem\trun\ttranslation"
    return (head + "\n" + "\n".join("\t".join(r) for r in rows) + "\n").encode()


def tsv_rows() -> list[list[str]]:
    rows = []
    seg_ids = ["1", "2", "1", "2"]
    for (system, run), texts in SYSTEMS.items():
        for i, text in enumerate(texts):
            rows.append([DOC_IDS[i], seg_ids[i], SOURCE[i], REF_A[i], REF_B[i], system, run, text])
    return rows


def jsonl_lines() -> list[dict[str, object]]:
    return [
        {
            "doc_id": r[0],
            "seg_id": r[1],
            "source": r[2],
            "references": [r[3], r[4]],
            "system": r[5],
            "run": r[6],
            "translation": r[7],
        }
        for r in tsv_rows()
    ]


def jsonl(objects: list[object]) -> bytes:
    return ("\n".join(json.dumps(o, ensure_ascii=False) for o in objects) + "\n").encode()


def xml_dataset(*, hyps: bool = True) -> str:
    docs = []
    for doc in ("d1", "d2"):
        idx = [i for i, d in enumerate(DOC_IDS) if d == doc]

        def block(texts: list[str], idx: list[int] = idx) -> str:
            segs = "".join(f'<seg id="{n}">{texts[i]}</seg>\n' for n, i in enumerate(idx, start=1))
            return f"<p>\n{segs}</p>"

        parts = [f'<src lang="de">{block(SOURCE)}</src>']
        parts.append(f'<ref lang="en" translator="A">{block(REF_A)}</ref>')
        parts.append(f'<ref lang="en" translator="B">{block(REF_B)}</ref>')
        if hyps:
            for (system, run), texts in SYSTEMS.items():
                parts.append(f'<hyp system="{system}" run="{run}" lang="en">{block(texts)}</hyp>')
        docs.append(f'<doc id="{doc}" origlang="de">\n' + "\n".join(parts) + "\n</doc>")
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<dataset id="test">\n'
        '<collection id="general">\n' + "\n".join(docs) + "\n</collection>\n</dataset>\n"
    )


def xml(text: str, name: str = "test.xml") -> list[UploadFile]:
    return [UploadFile(name, text.encode(), "data")]
