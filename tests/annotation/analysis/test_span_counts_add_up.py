"""One rule for which error spans count, seen the same everywhere: over random ESA and MQM
campaigns with merged identical outputs, QC items and an annotator who fails QC, the analysis
page's header, its per-system table, the dashboard, the API and the rows of ``spans.csv`` marked
``included`` give the same totals, and those totals are what the rule says when worked out here
from the stored answers and the scores' own include verdicts."""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.analysis.selectors import campaign_analysis_compute, campaign_analysis_settings
from annotation.analysis.spans import SpanSummary, campaign_span_summaries
from annotation.models import ItemKind, ItemOutput, ItemOutputCredit, Judgment
from tests.dashboard_factories import analysis_run_sync
from tests.factories import PASSWORD
from tests.span_factories import generated_span_campaign

pytestmark = pytest.mark.django_db


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
    owner, campaign, config = generated_span_campaign(seed, protocol)
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

    # The dashboard's error-span section (with the stored analysis' QC verdicts).
    analysis_run_sync(campaign=campaign, user=owner)
    dashboard = client.get(reverse("campaign_dashboard", args=[campaign.pk])).content.decode()
    assert _page_numbers(dashboard, summary) == ((spans, n_judged), per_system)
    assert "nan" not in dashboard

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
