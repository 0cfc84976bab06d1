"""An Appraise ESA export written by hand with segment rows and whole-document rows of two
documents (12 fields, as ``ExportSystemScoresToCSV`` writes them), the campaign texts it fits,
and the document scores worked out from it by hand."""

from __future__ import annotations

import json
from typing import Any

from annotation.campaigns.services import campaign_data_import
from annotation.campaigns.uploads import UploadFile
from annotation.models import Campaign
from tests.factories import lines, make_campaign

# Two documents of two segments each.
SOURCE = ["Das Haus ist klein.", "Es ist alt.", "Wir fahren los.", "Es regnet."]
DOC_IDS = ["d1", "d1", "d2", "d2"]
OUTPUTS = {
    "good": ["The house is small.", "It is old.", "We set off.", "It is raining."],
    "bad": ["House small.", "Is old it.", "We drive loose.", "It rains cats."],
}


def line(user: str, system: str, item: int, score: int, doc: str, whole: bool = False) -> str:
    """One row of Appraise's export (12 fields); a whole-document row's item id is the one
    Appraise gives the document item, not a segment's."""
    spans = '"' + json.dumps([]).replace('"', '""') + '"'
    start = [user, system, str(item), "TGT", "deu", "eng", str(score), f"{doc}#{system}"]
    return ",".join([*start, str(whole), spans, "1718000000.5", "1718000012.0"])


ROWS = [
    line("alice", "good", 1, 85, "d1"),
    line("alice", "good", 2, 75, "d1"),
    line("alice", "good", 2, 80, "d1", whole=True),  # line 3
    line("alice", "good", 3, 65, "d2"),
    line("alice", "good", 4, 55, "d2"),
    line("alice", "good", 4, 60, "d2", whole=True),
    line("alice", "bad", 1, 35, "d1"),
    line("alice", "bad", 2, 25, "d1"),
    line("alice", "bad", 2, 30, "d1", whole=True),
    line("bob", "good", 1, 95, "d1"),
    line("bob", "good", 2, 85, "d1"),
    line("bob", "good", 2, 90, "d1", whole=True),
    # Bob's file lacks segment 4 of the bad system's d2: its screen gains an unjudged item.
    line("bob", "bad", 3, 15, "d2"),
    line("bob", "bad", 4, 20, "d2", whole=True),
]
# Plain means of the document scores per system.
MEANS = {"good": (80 + 60 + 90) / 3, "bad": (30 + 20) / 2}
# The analysis: the mean over windows of each window's mean (d1 good: alice 80, bob 90).
ANALYSED = {"good": ((80 + 90) / 2 + 60) / 2, "bad": (30 + 20) / 2}


def appraise_documents_campaign(owner: Any, name: str) -> Campaign:
    """A campaign holding these texts (one run per system), as the export's rows fit them."""
    made = make_campaign(owner=owner, name=name)
    files = [
        UploadFile("src.de", lines(SOURCE), "source"),
        UploadFile("docs.txt", lines(DOC_IDS), "doc_ids"),
    ] + [UploadFile(f"{system}.txt", lines(texts), "systems") for system, texts in OUTPUTS.items()]
    campaign_data_import(campaign=made, files=files, user=owner)
    return made
