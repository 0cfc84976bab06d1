"""Campaigns with judgments and computed analysis results, for the dashboard's tests.

The background analysis normally runs in Celery workers; here the same pipeline functions run in
the test process, in the order the tasks call them (plan, every chunk, finalize), so the stored
documents are exactly what a worker would store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from annotation.analysis.selectors import campaign_analysis_settings
from annotation.demo.campaign import (
    DEMO_ANNOTATIONS_PER_TASK,
    DEMO_BAD_REFERENCES,
    DEMO_PROTOCOLS,
    demo_simulate_judgments,
)
from annotation.models import Campaign, ProtocolConfig
from annotation.tasking.build import tasks_build
from metrics import pipeline
from metrics.inline import analysis_job_run_here
from metrics.models import AnalysisJob, MetricSettings
from tests.factories import make_rich_campaign

# Fast metrics and few resamples: the numbers are real, the tests stay quick.
FAST_METRICS = ("bleu", "chrf", "ter")


def metric_settings_fast(
    campaign: Campaign,
    *,
    metrics: Sequence[str] = FAST_METRICS,
    resamples: int = 200,
    ar_trials: int = 200,
) -> MetricSettings:
    """Limit the campaign's analysis to a few fast metrics and resamples (the campaign's one
    resample count, which the human analysis uses too)."""
    campaign_resampling_set(campaign, resamples=resamples)
    settings = pipeline.metric_settings(campaign.pk)
    settings.metrics = list(metrics)
    settings.ar_trials = ar_trials
    settings.save()
    return settings


def campaign_resampling_set(
    campaign: Campaign, *, resamples: int | None = None, seed: int | None = None
) -> None:
    """Set the campaign's one resample count and seed (those given) as stored, without the
    recomputation a change through the pages or the API schedules."""
    chosen = campaign_analysis_settings(campaign=campaign)
    if resamples is not None:
        chosen = replace(chosen, resamples=resamples)
    if seed is not None:
        chosen = replace(chosen, seed=seed)
    Campaign.objects.filter(pk=campaign.pk).update(analysis_settings=chosen.as_dict())
    campaign.refresh_from_db(fields=["analysis_settings"])


def analysis_run_sync(
    *, campaign: Campaign, user: AbstractBaseUser | None = None, **fast: Any
) -> AnalysisJob:
    """Run the whole background analysis of ``campaign`` in this process; the finished job.

    ``fast`` goes to :func:`metric_settings_fast` (metrics, resamples, ar_trials).
    """
    metric_settings_fast(campaign, **fast)
    params = pipeline.analysis_params(campaign=campaign)
    job = AnalysisJob.objects.create(
        campaign=campaign,
        fingerprint=pipeline.campaign_fingerprint(campaign=campaign, params=params),
        params=params,
        dispatched=True,
        requested_by=user,
    )
    return analysis_job_run_sync(job)


def analysis_job_run_sync(job: AnalysisJob) -> AnalysisJob:
    """Do what the workers do with a queued job (start, every chunk, finalize), here."""
    return analysis_job_run_here(job)


def make_judged_demo_campaign(
    *,
    owner: AbstractBaseUser,
    organizers: Sequence[AbstractBaseUser] = (),
    annotators: Sequence[AbstractBaseUser] = (),
    items_per_task: int | None = None,
    merge_identical: bool = False,
    **fields: Any,
) -> Campaign:
    """The demo's data and protocols (adequacy and fluency, ranking, direct assessment; tasks
    of 20 items, or ``items_per_task``, for 3 annotators each), judged by the demo's simulated
    raters through the real services: four raters, two tasks of every protocol each, the last
    rater careless. Identical outputs are not merged unless ``merge_identical`` (the tests
    that use it recompute statistics from one judgment value per system output; the demo
    itself merges)."""
    fields.setdefault("name", "Demo-like de-en")
    campaign = make_rich_campaign(owner=owner, **fields)
    campaign.organizers.add(*organizers)
    campaign.annotators.add(*annotators)
    for name, protocol, mode, k, items in DEMO_PROTOCOLS:
        config = ProtocolConfig.objects.create(
            campaign=campaign,
            name=name,
            protocol=protocol,
            mode=mode,
            outputs_per_screen=k,
            items_per_task=items_per_task or items,
            annotations_per_task=DEMO_ANNOTATIONS_PER_TASK,
            # As in the demo: enough bad references for the QC test to judge every rater.
            qc_bad_reference=DEMO_BAD_REFERENCES,
            merge_identical=merge_identical,
        )
        tasks_build(config=config)
    demo_simulate_judgments(campaign=campaign)
    return campaign
