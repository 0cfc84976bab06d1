"""One rule for which error spans count, seen the same everywhere: over random ESA and MQM
campaigns with merged identical outputs, QC items and an annotator who fails QC, the analysis
page's header, its per-system table, the API and the rows of ``spans.csv`` marked
``included`` give the same totals, and those totals are what the rule says when worked out here
from the stored answers and the scores' own include verdicts."""

from __future__ import annotations

import csv
import io
import re
import uuid
from collections import Counter
from typing import Any

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from annotation.analysis.selectors import campaign_analysis_compute, campaign_analysis_settings
from annotation.analysis.spans import SpanSummary, campaign_span_summaries
from annotation.judging.services import judgment_record
from annotation.models import Item, ItemKind, ItemOutput, ItemOutputCredit, Judgment
from annotation.tasking.services import task_assign_next
from tests.factories import PASSWORD, make_config, make_user
from tests.merge_factories import make_merge_campaign

pytestmark = pytest.mark.django_db

CATEGORIES = ("accuracy/mistranslation", "fluency/grammar", "style", "terminology")


def _spans(rng: np.random.Generator, text: str, n: int, mqm: bool) -> list[dict[str, Any]]:
    """Up to ``n`` random spans inside ``text`` that do not overlap (bounds drawn without
    repeats and paired in order)."""
    n = min(n, (len(text) + 1) // 2)
    bounds = sorted(rng.choice(len(text) + 1, size=2 * n, replace=False).tolist())
    spans = []
    for start, end in zip(bounds[::2], bounds[1::2], strict=True):
        severity = str(rng.choice(["minor", "major"]))
        span = {"start": int(start), "end": int(end), "severity": severity}
        if mqm:
            span["category"] = str(rng.choice(CATEGORIES))
        spans.append(span)
    return spans


def _answer(
    rng: np.random.Generator, output: ItemOutput, protocol: str, careless: bool
) -> dict[str, Any]:
    """A careful annotator scores (ESA) or marks (MQM) bad references far worse than system
    outputs; a careless one the other way round, so that QC leaves them out."""
    mqm = protocol == "mqm"
    bad = output.kind == ItemKind.BAD_REFERENCE
    if careless:
        n = 0 if bad else int(rng.integers(2, 5))
        score = int(rng.integers(90, 101)) if bad else int(rng.integers(0, 50))
    else:
        n = 3 if bad else int(rng.integers(0, 3))
        score = int(rng.integers(0, 10)) if bad else int(rng.integers(50, 101))
    answer: dict[str, Any] = {"spans": _spans(rng, output.text, n, mqm)}
    if not mqm:
        answer["score"] = score
    return answer


def _generated_campaign(seed: int, protocol: str) -> tuple[Any, Any, Any]:
    rng = np.random.default_rng(seed)
    owner = make_user(f"owner{seed}", organizer=True)
    campaign = make_merge_campaign(owner=owner)
    n_annotators = int(rng.integers(3, 5))
    config = make_config(
        campaign,
        protocol,
        merge_identical=True,
        items_per_task=100,
        outputs_per_screen=1,
        annotations_per_task=n_annotators,
        qc_bad_reference=40,
        qc_repeat=20,
    )
    careless = int(rng.integers(0, n_annotators))
    for n in range(n_annotators):
        annotator = make_user(f"rater{seed}-{n}")
        assignment = task_assign_next(config=config, annotator=annotator)
        assert assignment is not None
        for item in Item.objects.filter(task=assignment.task).order_by("position"):
            answer = {
                str(o.pk): _answer(rng, o, protocol, careless=n == careless)
                for o in item.outputs.all()
            }
            judgment_record(
                assignment_id=assignment.pk,
                annotator=annotator,
                item_id=item.pk,
                revision_seen=0,
                submission_id=uuid.uuid4(),
                answer=answer,
            )
    return owner, campaign, config


def _expected(campaign: Any, config: Any) -> tuple[Counter[tuple[str, str]], Counter[str], int]:
    """Worked out from the stored answers: spans per (system, severity) and judged outputs
    per system, counting system outputs of the annotators the scores include, a merged output
    for every credited system; and the spans not counted."""
    analysis = campaign_analysis_compute(
        campaign=campaign, settings=campaign_analysis_settings(campaign=campaign)
    )
    [criterion] = [c for c in analysis.criteria if c.config_id == config.pk]
    included = {a.annotator_id for a in criterion.annotators if a.included}
    assert len(included) < len({a.annotator_id for a in criterion.annotators})
    errors: Counter[tuple[str, str]] = Counter()
    judged: Counter[str] = Counter()
    not_counted = 0
    outputs = {o.pk: o for o in ItemOutput.objects.filter(item__task__config=config)}
    credited: dict[int, list[str]] = {}
    for output, name in ItemOutputCredit.objects.filter(output__in=list(outputs)).values_list(
        "output_id", "system__name"
    ):
        credited.setdefault(output, []).append(name)
    for judgment in Judgment.objects.filter(item__task__config=config):
        for key, answer in judgment.answer.items():
            output = outputs[int(key)]
            names = [output.system.name, *credited.get(output.pk, [])] if output.system else []
            counted = output.kind == ItemKind.REAL and judgment.annotator_id in included
            for name in names if counted else []:
                judged[name] += 1
                errors.update((name, s["severity"]) for s in answer["spans"])
            if not counted:
                not_counted += len(answer["spans"]) * max(1, len(names))
    return errors, judged, not_counted


def _page_numbers(page: str, summary: SpanSummary) -> tuple[tuple[int, int], dict[str, int]]:
    section = page[page.index(f'id="spans-{summary.config_id}"') :]
    header = re.search(r"([\d,]+) error spans in ([\d,]+) judged system outputs", section)
    assert header is not None
    table = section[section.index('class="data span-systems"') :]
    table = table[: table.index("</table>")]
    rows = re.findall(
        r'<td class="name">([^<]+)</td><td class="num">(\d+)</td><td class="num">(\d+)</td>',
        table,
    )
    totals = (int(header[1].replace(",", "")), int(header[2].replace(",", "")))
    return totals, {name: int(errors) for name, _judged, errors in rows}


@pytest.mark.parametrize(
    ("seed", "protocol"), [(1, "esa"), (2, "mqm"), (3, "esa"), (4, "mqm"), (5, "mqm")]
)
def test_span_totals_agree_on_page_api_and_report(seed: int, protocol: str) -> None:
    owner, campaign, config = _generated_campaign(seed, protocol)
    assert ItemOutputCredit.objects.filter(output__item__task__config=config).exists()
    errors, judged, not_counted = _expected(campaign, config)

    [summary] = campaign_span_summaries(campaign=campaign)
    # The summary counts what the rule says.
    assert {s.name: s.n_judged for s in summary.systems} == dict(judged)
    assert Counter(
        {(s.name, sev): n for s in summary.systems for sev, n in s.by_severity.items()}
    ) == Counter({k: v for k, v in errors.items() if v})
    assert summary.n_spans == sum(errors.values()) == sum(s.n_errors for s in summary.systems)
    assert summary.n_judged == sum(judged.values())
    assert summary.n_spans_on_qc + summary.n_spans_left_out == not_counted
    assert summary.n_spans_left_out > 0
    if protocol == "mqm":
        for s in summary.systems:
            assert sum(s.by_category.values()) == s.n_errors

    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    # The page's header and its per-system table.
    page = client.get(reverse("campaign_analysis", args=[campaign.pk])).content.decode()
    (spans, n_judged), per_system = _page_numbers(page, summary)
    assert (spans, n_judged) == (summary.n_spans, summary.n_judged)
    assert sum(per_system.values()) == spans
    assert per_system == {s.name: s.n_errors for s in summary.systems}
    assert "nan" not in page

    # The API.
    body = client.get(reverse("api-campaign-error-spans", args=[campaign.pk])).json()
    [api] = body["protocols"]
    assert (api["spans"], api["judged_outputs"]) == (spans, n_judged)
    assert {s["system"]: s["errors"] for s in api["systems"]} == per_system

    # spans.csv: the rows marked included, aggregated, are the page's numbers; the others are
    # the spans the page says it did not count.
    text = client.get(reverse("campaign_report_spans", args=[campaign.pk, "csv"])).content.decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    counted = [r for r in rows if r["included"] == "1"]
    assert {r["item_type"] for r in counted} == {"SYSTEM"}
    assert Counter((r["system"], r["severity"]) for r in counted) == Counter(
        {k: v for k, v in errors.items() if v}
    )
    assert Counter(r["system"] for r in counted) == Counter(per_system)
    assert len(rows) - len(counted) == summary.n_spans_on_qc + summary.n_spans_left_out
