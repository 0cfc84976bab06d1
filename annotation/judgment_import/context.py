"""The campaign an import's rows are matched against (annotation/judgment_import/plan.py's
:class:`ImportContext`), read once per import or preview."""

from __future__ import annotations

from annotation.campaigns.uploads import UploadError, UploadProblem
from annotation.judgment_import.plan import ImportContext
from annotation.judgment_import.rows import ParsedJudgments
from annotation.models import Campaign, Reference, Run, Segment, System, Translation


def campaign_context(campaign: Campaign, parsed: ParsedJudgments) -> ImportContext:
    """The campaign's segments, systems, runs, outputs and first references by the ids and
    names an imported file's rows are matched on; refuses a campaign without texts."""
    segments = list(
        Segment.objects.filter(campaign=campaign).values_list(
            "id", "position", "document__external_id", "external_id", "source"
        )
    )
    if not segments:
        raise UploadError(
            [
                UploadProblem(
                    parsed.file,
                    None,
                    "this campaign has no texts yet; upload its source, references and system "
                    "outputs before importing judgments",
                )
            ]
        )
    systems = dict(System.objects.filter(campaign=campaign).values_list("name", "id"))
    runs = list(
        Run.objects.filter(system__campaign=campaign)
        .order_by("system_id", "position")
        .values_list("id", "system_id", "name")
    )
    first_run: dict[int, int] = {}
    for run_id, system_id, _ in runs:
        first_run.setdefault(system_id, run_id)
    return ImportContext(
        segment_by_position={position: pk for pk, position, _, _, _ in segments},
        segment_by_key={(doc, seg): pk for pk, _, doc, seg, _ in segments},
        sources={pk: source for pk, _, _, _, source in segments},
        segment_names={pk: f"{doc}:{seg}" for pk, _, doc, seg, _ in segments},
        system_by_name=systems,
        run_by_name={(system_id, name): run_id for run_id, system_id, name in runs},
        first_run=first_run,
        translations={
            (run_id, segment_id): (pk, text)
            for pk, run_id, segment_id, text in Translation.objects.filter(
                run__system__campaign=campaign
            ).values_list("id", "run_id", "segment_id", "text")
        },
        references={
            segment_id: (pk, text)
            for pk, segment_id, text in Reference.objects.filter(
                segment__campaign=campaign, index=0
            ).values_list("id", "segment_id", "text")
        },
    )
