"""The demo campaign: German→English, 60 sentences in six documents, two references, and four
systems of clearly different quality with three runs each, generated deterministically."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from annotation.campaigns.services import campaign_create, campaign_data_import, user_make_organizer
from annotation.campaigns.uploads import UploadFile
from annotation.demo.text import DEMO_DOCUMENTS
from annotation.judging.document_scores import document_score_record
from annotation.judging.screens import JudgmentError, Screen, annotation_screen
from annotation.judging.services import judgment_record
from annotation.models import (
    Assignment,
    Campaign,
    ItemKind,
    ItemOutput,
    ProtocolConfig,
    System,
)
from annotation.protocols import ADEQUACY_FLUENCY, DIRECT_ASSESSMENT, ESA, MQM, RANKING, Protocol
from annotation.tasking.build import tasks_build
from annotation.tasking.services import task_assign_next
from evalcore.human.spans import degraded_range

DEMO_CAMPAIGN_NAME = "Demo: German→English news"
DEMO_PASSWORD = "evalsite-demo"
DEMO_ORGANIZER = "organizer"
DEMO_ANNOTATORS = ("annotator1", "annotator2")
DEMO_RUNS = ("run1", "run2", "run3")
# Protocols of the demo: (name, protocol, mode, outputs per screen, items per task).
DEMO_PROTOCOLS = (
    ("Adequacy and fluency", ADEQUACY_FLUENCY, "bilingual", 4, 20),
    ("Ranking", RANKING, "bilingual", 4, 20),
    ("Direct assessment", DIRECT_ASSESSMENT, "source", 1, 20),
    # Span judgments vary more (a few errors, each worth 1 or 5): longer tasks give the QC
    # test enough bad references.
    ("Error spans (ESA)", ESA, "source", 1, 40),
    ("MQM", MQM, "source", 1, 40),
)
# A document-screen protocol (ESA, as WMT runs it in Appraise): windows of five segments of one
# system's translation, each segment with its spans and score, then a score of the window.
DEMO_DOCUMENT_PROTOCOL = ("ESA, document screens", ESA, "source", 1, 40)
DEMO_DOCUMENT_OPTIONS = {
    "screen": ProtocolConfig.Screen.DOCUMENT,
    "document_window": 5,
    "document_score": True,
}
DEMO_ANNOTATIONS_PER_TASK = 3
DEMO_BAD_REFERENCES = 25
# The demo keeps its own mix of the other QC items, so that its simulated judgments stay the
# same whatever the defaults are.
DEMO_REPEATS = 5
DEMO_REFERENCES = 5
# Simulated raters judge two tasks of every protocol, so the analysis pages have data while
# most slots stay free for the demo annotators. The last one answers at random (and should
# fail quality control).
DEMO_RATERS = ("rater-a", "rater-b", "rater-c", "rater-careless")
DEMO_RATER_TASKS = 2
# How good each simulated system is, 0..1 (the order of DEMO_SYSTEMS).
DEMO_QUALITY = {"nmt-large": 0.88, "nmt-base": 0.68, "smt-phrase": 0.45, "rbmt-toy": 0.22}


@dataclass(frozen=True)
class Degradation:
    """How a simulated system damages a reference: each step happens with its probability."""

    use_second_reference: float
    drop_word: float
    swap_neighbours: float
    untranslated_word: float
    scramble: bool


# Ordered best to worst; the names say what they imitate.
DEMO_SYSTEMS: dict[str, Degradation] = {
    "nmt-large": Degradation(0.5, 0.02, 0.05, 0.0, scramble=False),
    "nmt-base": Degradation(0.2, 0.08, 0.25, 0.1, scramble=False),
    "smt-phrase": Degradation(0.0, 0.18, 0.6, 0.4, scramble=False),
    "rbmt-toy": Degradation(0.0, 0.3, 0.8, 0.9, scramble=True),
}


def _rng(*parts: str) -> np.random.Generator:
    digest = hashlib.sha256("/".join(parts).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def degrade(source: str, reference: str, profile: Degradation, rng: np.random.Generator) -> str:
    """One simulated system output for a sentence."""
    words = reference.rstrip(".").split()
    source_words = [w.strip(".,") for w in source.split() if len(w) > 3]
    kept = [w for i, w in enumerate(words) if i == 0 or rng.random() >= profile.drop_word]
    if rng.random() < profile.swap_neighbours and len(kept) > 2:
        i = int(rng.integers(1, len(kept) - 1))
        kept[i], kept[i + 1] = kept[i + 1], kept[i]
    if rng.random() < profile.untranslated_word and source_words and len(kept) > 1:
        kept[int(rng.integers(1, len(kept)))] = source_words[int(rng.integers(len(source_words)))]
    if profile.scramble and len(kept) > 3:
        chunks = [kept[i : i + 3] for i in range(0, len(kept), 3)]
        order = rng.permutation(len(chunks))
        kept = [w for j in order for w in chunks[j]]
    text = " ".join(kept)
    return text[:1].upper() + text[1:] + "."


def demo_files() -> list[UploadFile]:
    """The demo campaign as the plain-text upload an organizer would make."""
    rows = [(doc, de, a, b) for doc, sentences in DEMO_DOCUMENTS for de, a, b in sentences]

    def text(lines: list[str]) -> bytes:
        return ("\n".join(lines) + "\n").encode("utf-8")

    files = [
        UploadFile("newstest-demo.de", text([r[1] for r in rows]), "source"),
        UploadFile("newstest-demo.ref-A.en", text([r[2] for r in rows]), "references"),
        UploadFile("newstest-demo.ref-B.en", text([r[3] for r in rows]), "references"),
        UploadFile("newstest-demo.docids", text([r[0] for r in rows]), "doc_ids"),
    ]
    for system, profile in DEMO_SYSTEMS.items():
        for run in DEMO_RUNS:
            outputs = []
            for n, (_, de, ref_a, ref_b) in enumerate(rows):
                rng = _rng(system, run, str(n))
                ref = ref_b if rng.random() < profile.use_second_reference else ref_a
                outputs.append(degrade(de, ref, profile, rng))
            files.append(UploadFile(f"{system}.{run}.txt", text(outputs), "systems"))
    return files


@dataclass(frozen=True)
class DemoResult:
    campaign: Campaign
    created: bool


def demo_load() -> DemoResult:
    """Create the demo accounts and campaign; running it again changes nothing."""
    users = get_user_model()
    with transaction.atomic():
        organizer, created_user = users.objects.get_or_create(username=DEMO_ORGANIZER)
        if created_user:
            organizer.set_password(DEMO_PASSWORD)
            organizer.save()
        user_make_organizer(user=organizer)
        annotators = []
        for name in DEMO_ANNOTATORS:
            annotator, created_user = users.objects.get_or_create(username=name)
            if created_user:
                annotator.set_password(DEMO_PASSWORD)
                annotator.save()
            annotators.append(annotator)
        campaign = Campaign.objects.filter(name=DEMO_CAMPAIGN_NAME, owner=organizer).first()
        if campaign is not None:
            return DemoResult(campaign, created=False)
        campaign = campaign_create(
            owner=organizer,
            name=DEMO_CAMPAIGN_NAME,
            source_language="de",
            target_language="en",
            status=Campaign.Status.ACTIVE,
            description=(
                "Sixty German news-style sentences in six documents, two English references, "
                "and four simulated systems (best to worst: nmt-large, nmt-base, smt-phrase, "
                "rbmt-toy) with three optimizer runs each."
            ),
        )
        campaign.annotators.set(annotators)
        campaign_data_import(campaign=campaign, files=demo_files(), user=organizer)
        for name, protocol, mode, k, items in (*DEMO_PROTOCOLS, DEMO_DOCUMENT_PROTOCOL):
            options = DEMO_DOCUMENT_OPTIONS if name == DEMO_DOCUMENT_PROTOCOL[0] else {}
            config = ProtocolConfig.objects.create(
                campaign=campaign,
                name=name,
                protocol=protocol,
                mode=mode,
                outputs_per_screen=k,
                items_per_task=items,
                annotations_per_task=DEMO_ANNOTATIONS_PER_TASK,
                # More bad references than the default 12 per 100, so that two tasks per rater
                # give the quality-control test enough pairs.
                qc_bad_reference=DEMO_BAD_REFERENCES,
                qc_repeat=DEMO_REPEATS,
                qc_reference=DEMO_REFERENCES,
                **options,
            )
            tasks_build(config=config)
        demo_simulate_judgments(campaign=campaign)
    return DemoResult(campaign, created=True)


def _quality(output: ItemOutput, systems: dict[int, str]) -> float:
    """How good ``output`` is; ``systems`` names the campaign's systems by id."""
    if output.kind == ItemKind.REFERENCE:
        return 0.97
    base = DEMO_QUALITY.get(systems.get(output.system_id or 0, ""), 0.5)
    return base * 0.45 if output.kind == ItemKind.BAD_REFERENCE else base


def _simulated_answer(
    outputs: Sequence[ItemOutput],
    protocol: Protocol,
    rng: np.random.Generator,
    systems: dict[int, str],
    *,
    careless: bool,
) -> dict[str, dict[str, float]]:
    """How the output looks to the rater (its system's quality, or anything when careless),
    then the protocol kind's answer for it; a kind that marks error spans is shown the texts
    and, in a bad reference, the degraded words."""
    noisy = [
        float(rng.random()) if careless else _quality(o, systems) + float(rng.normal(0, 0.08))
        for o in outputs
    ]
    noticed = [
        degraded_range(o.original.text, o.text)
        if o.kind == ItemKind.BAD_REFERENCE and o.original is not None
        else None
        for o in outputs
    ]
    return protocol.simulated_answer(
        [o.pk for o in outputs],
        noisy,
        rng,
        careless=careless,
        texts=[o.text for o in outputs],
        noticed=noticed,
    )


def _document_score(
    assignment: Assignment,
    rater: User,
    screen: Screen,
    rng: np.random.Generator,
    systems: dict[int, str],
    *,
    careless: bool,
    now: datetime,
) -> None:
    """A simulated rater's score of the window whose first item is on ``screen``: its system's
    quality with noise (anything when careless)."""
    quality = float(rng.random()) if careless else _quality(screen.outputs[0], systems)
    quality += 0 if careless else float(rng.normal(0, 0.06))
    document_score_record(
        assignment_id=assignment.pk,
        annotator=rater,
        item_id=screen.item.pk,
        revision_seen=0,
        submission_id=uuid.uuid4(),
        score=round(100 * min(max(quality, 0.0), 1.0)),
        now=now,
    )


def demo_simulate_judgments(*, campaign: Campaign, seed: int = 2026) -> int:
    """Simulated raters work through tasks with the real services (pull, show, submit), with
    scores that follow each system's quality. Returns the number of judgments made."""
    users = get_user_model()
    rng = np.random.default_rng(seed)
    systems = dict(System.objects.filter(campaign=campaign).values_list("pk", "name"))
    made = 0
    start = timezone.now() - timedelta(days=1)
    for n, name in enumerate(DEMO_RATERS):
        rater, _ = users.objects.get_or_create(username=name)
        rater.set_unusable_password()
        rater.save(update_fields=["password"])
        campaign.annotators.add(rater)
        careless = name.endswith("careless")
        for config in ProtocolConfig.objects.filter(campaign=campaign).order_by("created"):
            protocol = config.definition
            for _ in range(DEMO_RATER_TASKS):
                now = start + timedelta(hours=n)
                assignment = task_assign_next(config=config, annotator=rater, now=now)
                if assignment is None:
                    break
                while True:
                    try:
                        screen = annotation_screen(
                            assignment_id=assignment.pk, annotator=rater, now=now
                        )
                    except JudgmentError:
                        break  # finished
                    now += timedelta(seconds=float(rng.uniform(8, 40)))
                    if config.asks_document_score and screen.item.screen == screen.item.position:
                        # As the page does: the window's score first, then its segments.
                        _document_score(
                            assignment, rater, screen, rng, systems, careless=careless, now=now
                        )
                    judgment_record(
                        assignment_id=assignment.pk,
                        annotator=rater,
                        item_id=screen.item.pk,
                        revision_seen=0,
                        submission_id=uuid.uuid4(),
                        answer=_simulated_answer(
                            screen.outputs, protocol, rng, systems, careless=careless
                        ),
                        now=now,
                    )
                    made += 1
    return made
