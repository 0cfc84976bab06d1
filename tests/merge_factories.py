"""A campaign whose systems often produce the same translation, for the tests of merged
identical outputs: five systems (one run each), six segments, and per segment a known set of
identical outputs (the same text after NFC and whitespace normalisation)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from annotation.campaigns.services import campaign_data_import
from annotation.campaigns.uploads import UploadFile
from annotation.models import Campaign
from tests.factories import lines, make_campaign

MERGE_SOURCE = [f"Quelle Satz {n}." for n in range(6)]
MERGE_REFERENCE = [f"Reference sentence number {n} here." for n in range(6)]
MERGE_SYSTEMS = ["alpha", "bravo", "charlie", "delta", "echo"]
# Per segment, the text of each system in MERGE_SYSTEMS order. "Cafe\u0301" is "Café" in
# NFD; the whitespace variants collapse to one space.
MERGE_OUTPUTS = [
    ["The house is small.", " The house  is small.", "The house is small.", "A", "B"],
    ["One.", "Two.", "Three.", "Four.", "Five."],
    ["Café au lait.", "Cafe\u0301 au  lait. ", "Tea now.", "Milk now.", "Water now."],
    ["Same everywhere."] * 5,
    ["Uno.", "Dos.", "Tres.", "Cuatro.", "Cinco."],
    ["First.", "Second.", "Third.", "Fourth here.", "Fourth here."],
]
# The groups of identical outputs per segment (system indices).
MERGE_GROUPS = [
    [(0, 1, 2), (3,), (4,)],
    [(0,), (1,), (2,), (3,), (4,)],
    [(0, 1), (2,), (3,), (4,)],
    [(0, 1, 2, 3, 4)],
    [(0,), (1,), (2,), (3,), (4,)],
    [(0,), (1,), (2,), (3, 4)],
]


def make_merge_campaign(*, owner: AbstractBaseUser, **fields: Any) -> Campaign:
    """The campaign described above, its data uploaded as plain text."""
    campaign = make_campaign(owner=owner, **fields)
    files = [
        UploadFile("src.de", lines(MERGE_SOURCE), "source"),
        UploadFile("ref.en", lines(MERGE_REFERENCE), "references"),
        UploadFile("docs.txt", lines(["d1"] * 3 + ["d2"] * 3), "doc_ids"),
    ]
    files += [
        UploadFile(f"{name}.txt", lines([segment[s] for segment in MERGE_OUTPUTS]), "systems")
        for s, name in enumerate(MERGE_SYSTEMS)
    ]
    campaign_data_import(campaign=campaign, files=files, user=owner)
    return campaign
