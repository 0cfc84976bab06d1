"""What an import shows before it stores anything, and records once it has: a few judged
segments with the texts their annotators saw, and which checks of alignment ran.

A file that carries texts (Google's MQM TSV, EvalSite's table with texts) has every row's
source and shown output compared with the campaign's; spans are checked as an annotator's
submit is. A file without texts can only be checked on what it carries: its segment ids
against the campaign's documents and its systems' outputs there (and, for WMT's ids, the
numbering read from the documents).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from annotation.judgment_import.plan import ImportContext
from annotation.judgment_import.planned import ImportPlan
from annotation.judgment_import.rows import ParsedJudgments, clip

# How many judged segments a preview shows, and how much of each text.
SAMPLES = 3
TEXT_LENGTH = 300


@dataclass(frozen=True)
class SampleOutput:
    """One output of a sampled screen: who made it, the text shown, the answer given."""

    system: str  # the campaign's system, or "reference"
    kind: str  # the item kind of the output (real, repeat, bad reference, reference)
    text: str
    values: dict[str, float]
    # (the marked characters, severity, category) of each span, in the output's order.
    spans: list[tuple[str, str, str]]


@dataclass(frozen=True)
class PreviewSample:
    """One judged screen as its annotator saw it."""

    annotator: str
    segment: str  # doc:seg
    source: str
    outputs: list[SampleOutput]

    def as_json(self) -> dict[str, Any]:
        return {
            "annotator": self.annotator,
            "segment": self.segment,
            "source": self.source,
            "outputs": [
                {
                    "system": o.system,
                    "kind": o.kind,
                    "text": o.text,
                    "values": o.values,
                    "spans": [
                        {"text": text, "severity": severity, "category": category}
                        for text, severity, category in o.spans
                    ],
                }
                for o in self.outputs
            ],
        }


def preview_samples(plan: ImportPlan, context: ImportContext) -> list[PreviewSample]:
    """Up to :data:`SAMPLES` judgments spread over the file (its first, middle and last),
    with the source and outputs their screens showed."""
    judgments = list(plan.judgments.values())
    if not judgments:
        return []
    picks = sorted({round(i * (len(judgments) - 1) / max(SAMPLES - 1, 1)) for i in range(SAMPLES)})
    systems = {pk: name for name, pk in context.system_by_name.items()}
    samples = []
    for judgment in (judgments[i] for i in picks):
        item = plan.tasks[judgment.task][judgment.item]
        outputs = []
        for slot, output in enumerate(item.outputs):
            values = {c: v for (s, c), v in judgment.values if s == slot}
            spans = [
                (output.text[start:end] or "(omission)", severity, category)
                for start, end, severity, category in (judgment.spans or {}).get(slot, ())
            ]
            outputs.append(
                SampleOutput(
                    system=systems.get(output.system_id, "reference")
                    if output.system_id is not None
                    else "reference",
                    kind=output.kind,
                    text=clip(output.text, TEXT_LENGTH),
                    values=values,
                    spans=spans,
                )
            )
        samples.append(
            PreviewSample(
                annotator=judgment.annotator,
                segment=context.segment_names.get(item.segment_id, str(item.segment_id)),
                source=clip(context.sources.get(item.segment_id, ""), TEXT_LENGTH),
                outputs=outputs,
            )
        )
    return samples


def checks_ran(parsed: ParsedJudgments, numbering: dict[str, Any] | None) -> list[str]:
    """The checks of alignment an import ran on the file, in the user's words."""
    sources = sum(1 for row in parsed.rows if row.source_text)
    outputs = sum(1 for row in parsed.rows if row.output_text)
    spans = sum(1 for row in parsed.rows if row.spans or row.text_spans)
    checks = [
        f"{len(parsed.rows):,} rows: each segment found in the campaign, each system's output "
        "there, each score on its scale"
    ]
    if sources:
        checks.append(f"the source text of {sources:,} rows is the campaign's segment")
    if outputs:
        checks.append(f"the shown output of {outputs:,} rows is the campaign's text")
    if spans:
        overlap = "" if parsed.spans_may_overlap else " and do not overlap"
        checks.append(
            f"the spans of {spans:,} rows lie within the shown output{overlap}, as an "
            "annotator's submit is checked"
        )
    if not sources and not outputs:
        checks.append(
            "the file carries no texts: its segment ids were checked against the campaign's "
            "documents, and each system's segments against the outputs the campaign holds"
        )
    if numbering:
        checks.extend(str(check) for check in numbering.get("checks", ()))
    return checks
