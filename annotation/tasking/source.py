"""What building tasks reads of a campaign (its segments, systems, runs, references and
translations) and the outputs of a QC copy made from them: shared by the prebuilt build
(``build.py``) and pull mode's batches (``pull.py``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.utils.translation import gettext as _

from annotation.models import (
    Campaign,
    Item,
    ItemKind,
    ItemOutput,
    Reference,
    Run,
    Segment,
    System,
    Translation,
)
from annotation.protocols import Mode, Protocol
from annotation.tasking.plan import is_character_based, make_bad_reference, reference_units


class TaskError(Exception):
    """A task operation that cannot be done, with a message for the user."""


@dataclass(frozen=True)
class CampaignSource:
    """A campaign's data as a build reads it."""

    segments: list[Segment]
    systems: list[System]
    # Each system's runs, in the order of ``systems``.
    runs: list[list[Run]]
    # By index, then by segment id.
    references: dict[int, dict[int, Reference]]
    # (run id, segment id) -> (translation id, text).
    translations: dict[tuple[int, int], tuple[int, str]]
    # The text a bad reference borrows a phrase from, by segment, and its units.
    donors: list[str]
    donor_units: np.ndarray
    character_based: bool
    # The index of the reference shown as an output on a reference item.
    output_ref_index: int


def campaign_source(campaign: Campaign, mode: Mode) -> CampaignSource:
    """The campaign's segments, systems, references and translations; a TaskError when they
    cannot make tasks of ``mode``."""
    segments = list(Segment.objects.filter(campaign=campaign).order_by("position"))
    systems = list(
        System.objects.filter(campaign=campaign).prefetch_related("runs").order_by("name")
    )
    if not segments or not systems:
        raise TaskError(_("Upload the source text and at least one system before building tasks."))
    references: dict[int, dict[int, Reference]] = {}
    for ref in Reference.objects.filter(segment__campaign=campaign):
        references.setdefault(ref.index, {})[ref.segment_id] = ref
    if mode.shows_reference:
        _check_shown_references(segments, references)
    runs = [list(system.runs.all()) for system in systems]
    translations = {
        (run_id, segment_id): (pk, text)
        for pk, run_id, segment_id, text in Translation.objects.filter(
            run__system__campaign=campaign
        ).values_list("pk", "run_id", "segment_id", "text")
    }
    donors = (
        [references[0][s.pk].text if s.pk in references[0] else "" for s in segments]
        if 0 in references
        else [translations[(runs[0][0].pk, s.pk)][1] for s in segments]
    )
    character_based = is_character_based(campaign.target_language)
    return CampaignSource(
        segments=segments,
        systems=systems,
        runs=runs,
        references=references,
        translations=translations,
        donors=donors,
        donor_units=reference_units(donors, character_based=character_based),
        character_based=character_based,
        # The reference shown as an output must differ from the one shown as context.
        output_ref_index=1 if mode.shows_reference else 0,
    )


def _check_shown_references(
    segments: list[Segment], references: dict[int, dict[int, Reference]]
) -> None:
    """A TaskError unless every segment has a first reference, for a mode that shows one."""
    if 0 not in references:
        raise TaskError(_("This mode shows a reference, but the campaign has none."))
    # Every screen shows its segment's first reference: one without it cannot be judged.
    missing = [s for s in segments if s.pk not in references[0]]
    if missing:
        first = missing[0]
        raise TaskError(
            _(
                "This mode shows a reference, but %(missing)s of %(total)s segments have "
                "none (the first: document %(document)s, segment %(segment)s). Upload "
                "their references, or pick a mode that shows the source."
            )
            % {
                "missing": len(missing),
                "total": len(segments),
                "document": first.document.external_id,
                "segment": first.external_id,
            }
        )


def qc_original_id(copy: Item) -> int:
    """The real item a QC item copies (every QC item has its original)."""
    if copy.original_id is None:
        raise ValueError(f"item at position {copy.position} is no QC copy")
    return copy.original_id


def qc_copy_outputs(
    copy: Item,
    originals: list[ItemOutput],
    source: CampaignSource,
    *,
    protocol: Protocol,
    rng: np.random.Generator,
) -> list[ItemOutput]:
    """The outputs of a QC item: its original's, repeated, degraded (a bad reference) or, in
    one slot of a reference item, replaced with a human reference."""
    reference_slot = int(rng.integers(len(originals))) if copy.kind == ItemKind.REFERENCE else -1
    # Which outputs a bad-reference screen degrades is the kind's call (the others repeat).
    degraded = (
        set(protocol.degraded_positions(len(originals), rng))
        if copy.kind == ItemKind.BAD_REFERENCE
        else set()
    )
    shown = []
    for output in originals:
        common = {
            "item": copy,
            "position": output.position,
            "original": output,
            "translation_id": output.translation_id,
            "system": output.system,
            "run": output.run,
        }
        if output.position in degraded:
            bad = make_bad_reference(
                output.text,
                segment=copy.segment.position,
                references=source.donors,
                rng=rng,
                character_based=source.character_based,
                donor_units=source.donor_units,
            )
            shown.append(ItemOutput(kind=ItemKind.BAD_REFERENCE, text=bad.text, **common))
        elif output.position == reference_slot:
            reference = source.references[source.output_ref_index][copy.segment_id]
            shown.append(
                ItemOutput(
                    item=copy,
                    position=output.position,
                    kind=ItemKind.REFERENCE,
                    reference=reference,
                    text=reference.text,
                )
            )
        else:
            shown.append(ItemOutput(kind=ItemKind.REPEAT, text=output.text, **common))
    return shown
