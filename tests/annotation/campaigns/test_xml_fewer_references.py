"""WMT XML whose documents have fewer references than others (WMT's test-suite documents next
to news documents with two references) is kept: each segment stores the references its document
has, under their labels, and reference-based metrics score each segment against those
(sacreBLEU's rule for a missing reference, its signature saying ``nrefs:var``)."""

from __future__ import annotations

from typing import Any

import pytest
import sacrebleu

from annotation.campaigns.services import campaign_data_import
from annotation.campaigns.uploads import UploadError
from annotation.models import Reference, Segment, Translation
from metrics.models import AnalysisResult
from tests.dashboard_factories import analysis_run_sync
from tests.factories import make_campaign
from tests.support.uploads import xml, xml_dataset

pytestmark = pytest.mark.django_db


def _without_ref(text: str, doc: str, label: str) -> str:
    """The dataset with doc ``doc``'s reference ``label`` taken out."""
    start = text.index(f'<doc id="{doc}"')
    ref = text.index(f'<ref lang="en" translator="{label}">', start)
    end = text.index("</ref>", ref) + len("</ref>\n")
    return text[:ref] + text[end:]


def _references(campaign: Any) -> dict[tuple[str, str], dict[str, str]]:
    stored: dict[tuple[str, str], dict[str, str]] = {}
    for ref in Reference.objects.filter(segment__campaign=campaign).select_related(
        "segment__document"
    ):
        key = (ref.segment.document.external_id, ref.segment.external_id)
        stored.setdefault(key, {})[f"{ref.index}:{ref.label}"] = ref.text
    return stored


def test_a_document_with_fewer_references_is_kept_with_the_ones_it_has(owner: Any) -> None:
    full = _references_of_full_dataset(owner)
    text = _without_ref(xml_dataset(), "d2", "A")
    campaign = make_campaign(owner=owner)
    upload = campaign_data_import(campaign=campaign, files=xml(text), user=owner)
    stored = _references(campaign)
    for (doc, seg), refs in full.items():
        if doc == "d1":
            assert stored[(doc, seg)] == refs
        else:  # reference B keeps its label and its index
            assert stored[(doc, seg)] == {"1:B": refs["1:B"]}
    assert upload.summary["documents_with_fewer_references"] == 1
    assert any("fewer references" in w and "d2" in w for w in upload.summary["warnings"])
    # The same file again is the same source and references.
    campaign_data_import(campaign=campaign, files=xml(text), user=owner, replace_systems=True)
    assert _references(campaign) == stored


def _references_of_full_dataset(owner: Any) -> dict[tuple[str, str], dict[str, str]]:
    campaign = make_campaign(owner=owner)
    upload = campaign_data_import(campaign=campaign, files=xml(xml_dataset()), user=owner)
    assert "documents_with_fewer_references" not in upload.summary
    return _references(campaign)


def test_a_document_without_any_reference_among_referenced_ones_is_refused(owner: Any) -> None:
    text = _without_ref(_without_ref(xml_dataset(), "d2", "A"), "d2", "B")
    campaign = make_campaign(owner=owner)
    with pytest.raises(UploadError) as refused:
        campaign_data_import(campaign=campaign, files=xml(text), user=owner)
    problem = refused.value.problems[0]
    assert "doc d2 has no <ref>" in problem.message
    assert problem.line == text[: text.index('<doc id="d2"')].count("\n") + 1
    assert not Segment.objects.filter(campaign=campaign).exists()


def test_two_references_of_one_label_in_a_document_are_refused(owner: Any) -> None:
    text = xml_dataset().replace('translator="B"', 'translator="A"', 1)
    campaign = make_campaign(owner=owner)
    with pytest.raises(UploadError, match="doc d1 has two references A"):
        campaign_data_import(campaign=campaign, files=xml(text), user=owner)


def test_metrics_score_each_segment_against_the_references_it_has(owner: Any) -> None:
    campaign = make_campaign(owner=owner)
    campaign_data_import(
        campaign=campaign, files=xml(_without_ref(xml_dataset(), "d2", "A")), user=owner
    )
    job = analysis_run_sync(
        campaign=campaign, metrics=("bleu", "chrf", "ter"), resamples=20, ar_trials=20
    )
    doc = AnalysisResult.objects.get(job=job, kind="metrics").data
    segments = list(Segment.objects.filter(campaign=campaign).order_by("position"))
    # sacreBLEU's streams: None where a segment lacks that reference.
    refs: list[list[str | None]] = [
        [next((r.text for r in s.references.all() if r.index == i), None) for s in segments]
        for i in (0, 1)
    ]
    assert None in refs[0]
    assert None not in refs[1]
    made = {"bleu": sacrebleu.BLEU(), "chrf": sacrebleu.CHRF(), "ter": sacrebleu.TER()}
    checked = 0
    for entry in doc["metrics"]:
        assert "nrefs:var" in entry["signature"], entry["signature"]
        for system in entry["systems"]:
            for run in system["runs"]:
                hyps = [Translation.objects.get(run_id=run["id"], segment=s).text for s in segments]
                theirs = made[entry["key"]].corpus_score(hyps, refs)  # type: ignore[arg-type]
                assert run["score"] == pytest.approx(theirs.score, abs=1e-9), (entry["key"], run)
                checked += 1
        assert "nrefs:var" in made[entry["key"]].get_signature().format()
    assert checked >= 3 * 4
