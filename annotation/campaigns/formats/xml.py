"""Uploads in WMT's XML (wmt-format): a source file, references and system outputs by document."""

from __future__ import annotations

from collections.abc import Sequence

from django.utils.translation import gettext_lazy
from lxml import etree

from annotation.campaigns.uploads import (
    DEFAULT_RUN,
    Collector,
    ParsedOutput,
    ParsedSegment,
    ParsedUpload,
    SegmentKey,
    UploadError,
    UploadFile,
    UploadFormat,
    UploadProblem,
    check_outputs_complete,
    decode_text,
    max_length_of,
)
from annotation.models import Reference

FORM_XML = "xml"


def parse_xml(files: Sequence[UploadFile], *, max_bytes: int) -> ParsedUpload:
    """Every ``<doc>`` of every file: its ``<src>`` (with the ``<ref>`` blocks) gives segments,
    its ``<hyp>`` blocks give system outputs; every problem names its file and line."""
    problems = Collector()
    segments: dict[SegmentKey, ParsedSegment] = {}
    doc_order: list[str] = []
    # Every document's references by label: a document may have fewer than others (WMT's
    # test-suite documents); the campaign's reference sets are the labels in order of first sight.
    ref_labels: list[str] = []
    references: dict[SegmentKey, dict[str, str]] = {}
    no_reference: tuple[str, int | None, str] | None = None
    outputs: dict[tuple[str, str], ParsedOutput] = {}
    for upload in files:
        text = decode_text(upload, max_bytes=max_bytes)
        root = _parse_xml_root(upload.name, text)
        for doc in root.iter("doc"):
            doc_id = (doc.get("id") or "").strip()
            if not doc_id:
                problems.add(upload.name, doc.sourceline, "malformed XML: <doc> without an id")
                continue
            src_blocks = doc.findall("src")
            if len(src_blocks) > 1:
                problems.add(upload.name, doc.sourceline, f"doc {doc_id} has more than one <src>")
                continue
            if src_blocks:
                if any(k[0] == doc_id for k in segments):
                    problems.add(
                        upload.name, doc.sourceline, f"doc {doc_id} has its source given twice"
                    )
                    continue
                labels = _xml_doc_segments(
                    problems, upload.name, doc, doc_id, src_blocks[0], segments, references
                )
                if labels is None:
                    continue
                doc_order.append(doc_id)
                ref_labels.extend(label for label in labels if label not in ref_labels)
                if not labels and not no_reference:
                    no_reference = (upload.name, doc.sourceline, doc_id)
            _xml_doc_outputs(problems, upload.name, doc, doc_id, outputs)
    problems.raise_if_any()
    if not segments and not outputs:
        raise UploadError(
            [UploadProblem(files[0].name, None, "malformed XML: no <doc> with <src> or <hyp>")]
        )
    if ref_labels and no_reference:
        name, line, doc_id = no_reference
        raise UploadError(
            [
                UploadProblem(
                    name,
                    line,
                    f"doc {doc_id} has no <ref> while other documents have references; "
                    "reference-based metrics need at least one reference for every segment "
                    "(leave the document out, or give it a reference)",
                )
            ]
        )
    if segments:
        _check_outputs_match_source(problems, segments, outputs)
    for key, segment in segments.items():
        given = references.get(key, {})
        segment.references = [given.get(label) for label in ref_labels]
    return ParsedUpload(
        form=FORM_XML,
        files=[f.name for f in files],
        segments=list(segments.values()) or None,
        reference_labels=ref_labels,
        outputs=list(outputs.values()),
    )


def _xml_doc_outputs(
    problems: Collector,
    name: str,
    doc: etree._Element,
    doc_id: str,
    outputs: dict[tuple[str, str], ParsedOutput],
) -> None:
    """Add the segments of the document's ``<hyp>`` blocks to the output of their system and
    run (``outputs``, created on first sight)."""
    for hyp in doc.findall("hyp"):
        system = (hyp.get("system") or "").strip()
        if not system:
            problems.add(
                name,
                hyp.sourceline,
                "unknown system: <hyp> without a system attribute",
            )
            continue
        run = (hyp.get("run") or "").strip() or DEFAULT_RUN
        out = outputs.setdefault((system, run), ParsedOutput(system, run, name))
        for seg_id, seg_text, line in _xml_segs(problems, name, hyp):
            key = (doc_id, seg_id)
            if key in out.by_key:
                problems.add(
                    name,
                    line,
                    f"duplicate system/run {system}/{run} for doc {doc_id} seg {seg_id}",
                )
                continue
            out.by_key[key] = (seg_text, line)


def _check_outputs_match_source(
    problems: Collector,
    segments: dict[SegmentKey, ParsedSegment],
    outputs: dict[tuple[str, str], ParsedOutput],
) -> None:
    """With a source in the upload, each output translates its segments and no others: stray
    segments (the first of each output) are raised before missing ones."""
    for out in outputs.values():
        for key, (_, line) in out.by_key.items():
            if key not in segments:
                problems.add(
                    out.file,
                    line,
                    f"system {out.system} translates doc {key[0]} seg {key[1]}, which the "
                    "source does not have",
                )
                break
    problems.raise_if_any()
    check_outputs_complete(problems, list(segments), list(outputs.values()))
    problems.raise_if_any()


def _parse_xml_root(name: str, text: str) -> etree._Element:
    # lxml refuses str input with an encoding declaration, so it gets UTF-8 bytes; the parser is
    # told they are UTF-8, or it would obey a declared encoding (ISO-8859-1, say) and garble the
    # text that decode_text has already read as UTF-8.
    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        remove_comments=True,
        huge_tree=False,
        encoding="utf-8",
    )
    try:
        root = etree.fromstring(text.encode("utf-8"), parser=parser)
    except etree.XMLSyntaxError as exc:
        line = exc.lineno if exc.lineno else None
        message = exc.msg.split(", line ")[0] if exc.msg else "not well-formed"
        raise UploadError([UploadProblem(name, line, f"malformed XML: {message}")]) from None
    if root.tag not in {"dataset", "refset", "srcset", "tstset"}:
        raise UploadError(
            [
                UploadProblem(
                    name,
                    root.sourceline,
                    f"malformed XML: the root element is <{root.tag}>, expected <dataset>",
                )
            ]
        )
    return root


def _xml_segs(problems: Collector, name: str, block: etree._Element) -> list[tuple[str, str, int]]:
    segs: list[tuple[str, str, int]] = []
    seen: set[str] = set()
    for seg in block.iter("seg"):
        seg_id = (seg.get("id") or "").strip()
        line = seg.sourceline or 0
        if not seg_id:
            problems.add(name, line, "malformed XML: <seg> without an id")
            continue
        if seg_id in seen:
            problems.add(name, line, f"malformed XML: seg id {seg_id} appears twice in one block")
            continue
        seen.add(seg_id)
        segs.append((seg_id, "".join(seg.itertext()).strip(), line))
    return segs


def _xml_doc_segments(
    problems: Collector,
    name: str,
    doc: etree._Element,
    doc_id: str,
    src: etree._Element,
    segments: dict[SegmentKey, ParsedSegment],
    references: dict[SegmentKey, dict[str, str]],
) -> list[str] | None:
    src_segs = _xml_segs(problems, name, src)
    if not src_segs:
        problems.add(name, src.sourceline, f"doc {doc_id}: <src> has no <seg>")
        return None
    for seg_id, seg_text, line in src_segs:
        if not seg_text:
            problems.add(name, line, f"empty source (doc {doc_id} seg {seg_id})")
    src_ids = [s[0] for s in src_segs]
    labels: list[str] = []
    ref_texts: list[dict[str, str]] = []
    label_max = max_length_of(Reference, "label")
    for n, ref in enumerate(doc.findall("ref"), start=1):
        label = (ref.get("translator") or "").strip() or f"reference {n}"
        if len(label) > label_max:
            problems.add(
                name,
                ref.sourceline,
                f"reference label (the translator attribute of <ref>) of doc {doc_id} longer "
                f"than {label_max} characters",
            )
        if label in labels:
            problems.add(name, ref.sourceline, f"doc {doc_id} has two references {label}")
        labels.append(label)
        texts: dict[str, str] = {}
        for seg_id, seg_text, line in _xml_segs(problems, name, ref):
            if seg_id not in src_ids:
                problems.add(name, line, f"reference seg {seg_id} is not in doc {doc_id}'s source")
            elif not seg_text:
                problems.add(name, line, f"empty reference (doc {doc_id} seg {seg_id})")
            texts[seg_id] = seg_text
        missing = [s for s in src_ids if s not in texts]
        if missing:
            problems.add(
                name,
                ref.sourceline,
                f"reference {label} of doc {doc_id} lacks seg {missing[0]}",
            )
        ref_texts.append(texts)
    for seg_id, seg_text, line in src_segs:
        segments[(doc_id, seg_id)] = ParsedSegment(doc_id, seg_id, seg_text, [], line, name)
        references[(doc_id, seg_id)] = {
            label: t[seg_id] for label, t in zip(labels, ref_texts, strict=True) if seg_id in t
        }
    return labels


FORMAT = UploadFormat(
    key=FORM_XML, label=gettext_lazy("WMT XML"), parse=parse_xml, extensions=(".xml", ".sgm")
)
