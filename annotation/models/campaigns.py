"""Campaigns and their data: campaigns, documents, segments, references, systems, runs,
translations and uploads.

Every invariant that can be a database constraint is one (unique positions, one translation per run
and segment, …), so a bug in an importer cannot write inconsistent data.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils.translation import gettext_lazy as _


class Campaign(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", _("Draft")
        ACTIVE = "active", _("Active")
        CLOSED = "closed", _("Closed")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(_("name"), max_length=200)
    source_language = models.CharField(
        _("source language"), max_length=35, help_text=_("BCP-47 code, e.g. en")
    )
    target_language = models.CharField(
        _("target language"), max_length=35, help_text=_("BCP-47 code, e.g. de")
    )
    description = models.TextField(_("description"), blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="owned_campaigns"
    )
    organizers = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="co_organized_campaigns",
        help_text=_("Co-organizers: they see and manage the campaign like its owner."),
    )
    annotators = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="annotated_campaigns"
    )
    # The campaign's human-judgment analysis setting (annotation.analysis.settings.
    # AnalysisSettings.as_dict; empty: the defaults), read by every route that analyses it.
    analysis_settings = models.JSONField(_("analysis settings"), default=dict, blank=True)
    # Tasks of a protocol that a crowd link serves are the crowd's: the campaign's own
    # annotators are not offered them unless the organizer says so (annotation.crowd.entrance).
    crowd_tasks_to_roster = models.BooleanField(
        _("offer crowd tasks to the campaign's annotators"),
        default=False,
        help_text=_(
            "Let the campaign's own annotators also take tasks of protocols that a crowd link "
            "serves."
        ),
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created"]
        constraints = [
            models.CheckConstraint(condition=~Q(name=""), name="campaign_name_not_empty"),
            models.CheckConstraint(
                condition=~Q(source_language="") & ~Q(target_language=""),
                name="campaign_languages_not_empty",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.source_language}→{self.target_language})"

    def get_absolute_url(self) -> str:
        return reverse("campaign_detail", args=[self.id])


class Document(models.Model):
    # No index of its own: the unique indexes (campaign, external_id) and (campaign, position) start
    # with it.
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="documents", db_index=False
    )
    external_id = models.CharField(max_length=200)
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["campaign", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "external_id"], name="document_unique_external_id"
            ),
            models.UniqueConstraint(fields=["campaign", "position"], name="document_unique_pos"),
            models.CheckConstraint(condition=~Q(external_id=""), name="document_id_not_empty"),
        ]

    def __str__(self) -> str:
        return self.external_id


class Segment(models.Model):
    """One source sentence. ``position`` is its 0-based line in the campaign's test set;
    ``position_in_document`` its 0-based place in its document (context for the annotators)."""

    # No index of its own: the unique index (campaign, position) starts with it.
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="segments", db_index=False
    )
    # No index of its own: the unique indexes (document, position) and (document, external_id) start
    # with it.
    document = models.ForeignKey(
        Document, on_delete=models.CASCADE, related_name="segments", db_index=False
    )
    position = models.PositiveIntegerField()
    position_in_document = models.PositiveIntegerField()
    external_id = models.CharField(max_length=200)
    source = models.TextField()

    class Meta:
        ordering = ["campaign", "position"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "position"], name="segment_unique_pos"),
            models.UniqueConstraint(
                fields=["document", "position_in_document"], name="segment_unique_doc_pos"
            ),
            models.UniqueConstraint(
                fields=["document", "external_id"], name="segment_unique_external_id"
            ),
            models.CheckConstraint(condition=~Q(source=""), name="segment_source_not_empty"),
        ]

    def __str__(self) -> str:
        return f"{self.document_id}:{self.external_id}"


class Reference(models.Model):
    """A human translation of a segment. ``index`` numbers the reference sets (0, 1, …), so that
    reference *i* of every segment came from the same translator or file."""

    # No index of its own: the unique index (segment, index) starts with it.
    segment = models.ForeignKey(
        Segment, on_delete=models.CASCADE, related_name="references", db_index=False
    )
    index = models.PositiveSmallIntegerField()
    label = models.CharField(max_length=200, blank=True)
    text = models.TextField()

    class Meta:
        ordering = ["segment", "index"]
        constraints = [
            models.UniqueConstraint(fields=["segment", "index"], name="reference_unique_index"),
        ]

    def __str__(self) -> str:
        return f"ref{self.index} of {self.segment_id}"


class System(models.Model):
    # No index of its own: the unique index (campaign, name) starts with it.
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="systems", db_index=False
    )
    name = models.CharField(max_length=200)
    # A human translation rated as a system (Google's ``ref-A``, WMT's ``Human-B``): shown and
    # ranked like any system, left out of metric–human correlations by default, as the metric
    # papers do. Set from the name when the system is created (annotation.campaigns.systems).
    human = models.BooleanField(default=False)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "name"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "name"], name="system_unique_name"),
            models.CheckConstraint(condition=~Q(name=""), name="system_name_not_empty"),
        ]

    def __str__(self) -> str:
        return self.name


class Run(models.Model):
    """One optimizer run (MultEval's replica) of a system; a system has one or more."""

    # No index of its own: the unique indexes (system, name) and (system, position) start with it.
    system = models.ForeignKey(
        System, on_delete=models.CASCADE, related_name="runs", db_index=False
    )
    name = models.CharField(max_length=200)
    position = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["system", "position"]
        constraints = [
            models.UniqueConstraint(fields=["system", "name"], name="run_unique_name"),
            models.UniqueConstraint(fields=["system", "position"], name="run_unique_pos"),
            models.CheckConstraint(condition=~Q(name=""), name="run_name_not_empty"),
        ]

    def __str__(self) -> str:
        return f"{self.system.name}/{self.name}"


class Translation(models.Model):
    # No index of its own: the unique index (run, segment) starts with it.
    run = models.ForeignKey(
        Run, on_delete=models.CASCADE, related_name="translations", db_index=False
    )
    segment = models.ForeignKey(Segment, on_delete=models.CASCADE, related_name="translations")
    text = models.TextField(blank=True)

    class Meta:
        ordering = ["run", "segment"]
        constraints = [
            models.UniqueConstraint(fields=["run", "segment"], name="translation_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.segment_id}"


class Upload(models.Model):
    """A record of one successful import: who, when, which files, what it added."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="uploads")
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    # One of the upload forms' keys (annotation/campaigns/parse.py: UPLOAD_FORMATS), checked
    # there rather than by choices here, so that a new form needs no migration.
    form = models.CharField(max_length=10)
    files = models.JSONField(default=list)
    summary = models.JSONField(default=dict)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.form} upload to {self.campaign_id} at {self.created:%Y-%m-%d}"


# --------------------------------------------------------------------------------------------
# Annotation: protocol settings, tasks (HITs), items (screens), assignments and judgments.


# --------------------------------------------------------------------------------------------
# Human-judgment analysis: imported judgments and pseudonymous annotator ids in reports.
