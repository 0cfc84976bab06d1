"""WMT21's Flores DA release (shared/data/wmt21-flores-da/, never copied into the repository):
its XML test sets uploaded as campaigns, its system names as the campaign has them, and its
published system scores."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

from annotation.campaigns.services import campaign_data_import
from annotation.campaigns.uploads import UploadFile
from tests.factories import make_campaign
from tests.support.shared_data import shared_data

FLORES: Path | None = shared_data("wmt21-flores-da")

MISSING = (
    "the WMT21 Flores data is neither beside the project nor beside its origin "
    "(set EVALSITE_SHARED_DATA)"
)


def _data() -> Path:
    assert FLORES is not None, MISSING
    return FLORES


def flores_xml(pair: str) -> bytes:
    """The WMT XML test set of ``pair`` (``zu-xh``): documents, reference, every system."""
    return gzip.decompress((_data() / "xml" / f"florestest2021.{pair}.all.xml.gz").read_bytes())


def flores_campaign(pair: str, owner: Any) -> Any:
    """A campaign of ``pair``'s test set, uploaded in the XML's own order."""
    source, target = pair.split("-")
    campaign = make_campaign(
        owner=owner, name=f"Flores {pair}", source_language=source, target_language=target
    )
    campaign_data_import(
        campaign=campaign,
        files=[UploadFile(f"florestest2021.{pair}.all.xml", flores_xml(pair), "")],
        user=owner,
    )
    return campaign


def wmt_system(name: str) -> str:
    """WMT's system id without its submission number: ``GTCOM.3`` → ``GTCOM``."""
    return name.strip('"').rsplit(".", 1)[0]


def published_system_scores(pair: str) -> dict[str, tuple[float, float, int]]:
    """``ad-sys-scores-<pair>.csv`` (RAW.SCR Z.SCR N SYS N.ALL): system → (raw, z, N)."""
    lines = (_data() / "humaneval" / f"ad-sys-scores-{pair}.csv").read_text().splitlines()
    return {
        wmt_system(f[3]): (float(f[0]), float(f[1]), int(f[2]))
        for f in (line.split() for line in lines[1:])
    }


def published_system_ids(pair: str) -> dict[str, str]:
    """The release's system ids of ``pair`` mapped to the campaign's names (HuaweiTSC.0 =
    HuaweiTSC), from its published system scores."""
    lines = (_data() / "humaneval" / f"ad-sys-scores-{pair}.csv").read_text().splitlines()
    return {f[3]: wmt_system(f[3]) for f in (line.split() for line in lines[1:])}
