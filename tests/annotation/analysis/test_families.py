"""Analysis families are strategy objects, as protocol kinds are: every kind names a registered
family, the family owns what differs between families (its QC, its analysis, its report
columns, its page sections), and no module outside the family modules asks which family it
has (``annotation/analysis/families``; ``templates/*/families`` hold their page parts)."""

from __future__ import annotations

import pathlib
import re

import pytest

from annotation.analysis.families.registry import (
    FAMILIES,
    family_named,
    family_of_protocol,
    family_of_result,
)
from annotation.protocols import PROTOCOLS

ROOT = pathlib.Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("key", list(PROTOCOLS))
def test_every_kind_names_a_registered_family_and_shows_it_enough_outputs(key: str) -> None:
    kind = PROTOCOLS[key]
    family = family_of_protocol(key)
    assert family is family_named(kind.analysis)
    assert kind.min_outputs >= family.min_outputs
    assert kind.max_outputs is None or kind.max_outputs >= kind.min_outputs


def test_families_have_one_key_and_one_stored_kind_each() -> None:
    assert len({f.key for f in FAMILIES}) == len({f.result_kind for f in FAMILIES}) == len(FAMILIES)
    for family in FAMILIES:
        assert family.analysis_template
        assert family.dashboard_template
    # The stored documents keep the kinds they always had.
    assert [f.result_kind for f in FAMILIES[:2]] == ["scores", "ranking"]


def test_a_stored_result_finds_its_family_and_an_unknown_kind_is_refused() -> None:
    class Stored:
        kind = "ranking"

    assert family_of_result(Stored()).key == "pairwise"
    Stored.kind = "histogram"
    with pytest.raises(KeyError):
        family_of_result(Stored())


# A test on a family's name: the kind's ``analysis`` attribute or its constants compared, a
# stored result's kind compared with a family's, the old ``is_pairwise`` flag.
FAMILY_BRANCH = re.compile(
    r"is_pairwise|\.analysis\s*(==|!=|\bin\b)|(==|!=)\s*\(?\s*(PAIRWISE|SCORES)\b"
    r"|\bkind\s*(===?|!==?)\s*[\"'](ranking|scores|pairwise)[\"']"
    r"|[\"'](ranking|scores|pairwise)[\"']\s*(===?|!==?)"
)


def test_no_module_outside_the_families_asks_which_family_it_is() -> None:
    found = []
    for folder in ("annotation", "metrics", "evalsite", "templates", "static"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix not in {".py", ".html", ".js"} or "families" in path.parts:
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if FAMILY_BRANCH.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert found == []
