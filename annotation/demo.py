"""The demo campaign: German→English, 60 sentences in six documents, two references, and four
systems of clearly different quality with three runs each, generated deterministically."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.demo_text import DEMO_DOCUMENTS
from annotation.importers import UploadFile
from annotation.models import Campaign
from annotation.services import campaign_create, campaign_data_import, user_make_organizer

DEMO_CAMPAIGN_NAME = "Demo: German→English news"
DEMO_PASSWORD = "evalsite-demo"
DEMO_ORGANIZER = "organizer"
DEMO_ANNOTATORS = ("annotator1", "annotator2")
DEMO_RUNS = ("run1", "run2", "run3")


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
    return DemoResult(campaign, created=True)
