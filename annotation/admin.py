from __future__ import annotations

from typing import Any

from django.contrib import admin

from annotation.models import (
    AllocationState,
    AnnotatorDecision,
    AnnotatorPseudonym,
    Assignment,
    Campaign,
    CrowdLink,
    CrowdWorker,
    Document,
    DocumentJudgment,
    DocumentJudgmentRevision,
    Invite,
    Item,
    ItemOutput,
    ItemOutputCredit,
    Judgment,
    JudgmentImport,
    JudgmentImportJob,
    JudgmentRevision,
    JudgmentSpan,
    JudgmentValue,
    ProtocolConfig,
    Reference,
    Run,
    Segment,
    System,
    Task,
    TaskBuild,
    Translation,
    TutorialAnswer,
    TutorialItem,
    TutorialRule,
    TutorialRun,
    Upload,
)


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["name", "source_language", "target_language", "owner", "status", "created"]
    list_filter = ["status", "source_language", "target_language"]
    search_fields = ["name", "description"]
    filter_horizontal = ["organizers", "annotators"]
    readonly_fields = ["id", "created", "updated"]


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["external_id", "campaign", "position"]
    search_fields = ["external_id"]
    list_select_related = ["campaign"]


@admin.register(Segment)
class SegmentAdmin(admin.ModelAdmin):
    list_display = ["position", "external_id", "document", "campaign", "source"]
    search_fields = ["source", "external_id"]
    list_select_related = ["campaign", "document"]
    raw_id_fields = ["document"]


@admin.register(Reference)
class ReferenceAdmin(admin.ModelAdmin):
    list_display = ["segment", "index", "label", "text"]
    search_fields = ["text"]
    raw_id_fields = ["segment"]


class RunInline(admin.TabularInline):
    model = Run
    extra = 0


@admin.register(System)
class SystemAdmin(admin.ModelAdmin):
    # ``human`` is set from the name; clearing it here puts the system into the correlations.
    list_display = ["name", "campaign", "human", "created"]
    list_filter = ["human"]
    search_fields = ["name"]
    inlines = [RunInline]


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["name", "system", "position"]
    list_select_related = ["system"]


@admin.register(Translation)
class TranslationAdmin(admin.ModelAdmin):
    list_display = ["run", "segment", "text"]
    search_fields = ["text"]
    raw_id_fields = ["run", "segment"]
    list_select_related = ["run__system", "segment"]


@admin.register(Upload)
class UploadAdmin(admin.ModelAdmin):
    list_display = ["campaign", "form", "uploaded_by", "created"]
    list_filter = ["form"]
    readonly_fields = ["campaign", "uploaded_by", "form", "files", "summary", "created"]


@admin.register(ProtocolConfig)
class ProtocolConfigAdmin(admin.ModelAdmin):
    list_display = ["name", "campaign", "protocol", "mode", "outputs_per_screen", "items_per_task"]
    list_filter = ["protocol"]
    list_select_related = ["campaign"]
    # Set when the config is created (MQM's weights); judgments keep the weights they used.
    readonly_fields = ["settings"]


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ["__str__", "config", "annotations_needed", "slots_taken"]
    list_select_related = ["config"]


@admin.register(TaskBuild)
class TaskBuildAdmin(admin.ModelAdmin):
    list_display = ["pk", "config", "status", "tasks", "items", "created", "finished"]
    list_filter = ["status"]
    list_select_related = ["config"]
    readonly_fields = ["created", "started", "finished", "progressed"]
    raw_id_fields = ["config", "requested_by"]


class ItemOutputInline(admin.TabularInline):
    model = ItemOutput
    extra = 0
    raw_id_fields = ["translation", "system", "run", "reference", "original"]


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ["__str__", "kind", "segment"]
    list_filter = ["kind"]
    raw_id_fields = ["task", "segment", "original"]
    inlines = [ItemOutputInline]


@admin.register(ItemOutput)
class ItemOutputAdmin(admin.ModelAdmin):
    list_display = ["__str__", "kind", "system", "text"]
    list_filter = ["kind"]
    raw_id_fields = ["item", "translation", "system", "run", "reference", "original"]


@admin.register(ItemOutputCredit)
class ItemOutputCreditAdmin(admin.ModelAdmin):
    """A system credited with a merged output's answer besides the one it shows."""

    list_display = ["__str__", "output", "system", "run"]
    raw_id_fields = ["output", "system", "run", "translation"]


@admin.register(AllocationState)
class AllocationStateAdmin(admin.ModelAdmin):
    """A pull-mode protocol's allocation: what its policy decided last."""

    list_display = ["config", "judgments", "allocated", "stopped", "computed"]
    list_filter = ["stopped"]
    raw_id_fields = ["config"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = [
        "annotator",
        "task",
        "status",
        "origin",
        "items_done",
        "claimed_at",
        "expires_at",
    ]
    list_filter = ["status", "origin"]
    raw_id_fields = ["task", "annotator", "shown_item"]


class JudgmentValueInline(admin.TabularInline):
    model = JudgmentValue
    extra = 0
    raw_id_fields = ["output"]


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    list_display = ["annotator", "item", "revision", "submitted_at", "seconds"]
    raw_id_fields = ["item", "annotator", "assignment"]
    inlines = [JudgmentValueInline]


@admin.register(JudgmentValue)
class JudgmentValueAdmin(admin.ModelAdmin):
    list_display = ["judgment", "output", "criterion", "value"]
    raw_id_fields = ["judgment", "output"]


@admin.register(JudgmentSpan)
class JudgmentSpanAdmin(admin.ModelAdmin):
    list_display = ["judgment", "output", "start", "end", "severity", "category"]
    list_filter = ["severity"]
    raw_id_fields = ["judgment", "output"]


@admin.register(JudgmentRevision)
class JudgmentRevisionAdmin(admin.ModelAdmin):
    list_display = ["judgment", "revision", "submitted_at", "seconds"]
    raw_id_fields = ["judgment"]


@admin.register(DocumentJudgment)
class DocumentJudgmentAdmin(admin.ModelAdmin):
    list_display = ["annotator", "screen", "system", "kind", "score", "revision", "submitted_at"]
    raw_id_fields = ["annotator", "screen", "assignment", "document", "system", "run"]


@admin.register(DocumentJudgmentRevision)
class DocumentJudgmentRevisionAdmin(admin.ModelAdmin):
    list_display = ["judgment", "revision", "score", "submitted_at"]
    raw_id_fields = ["judgment"]


@admin.register(Invite)
class InviteAdmin(admin.ModelAdmin):
    list_display = ["label", "campaign", "user", "expires_at", "revoked", "used_at"]
    raw_id_fields = ["campaign", "user", "created_by"]


@admin.register(CrowdLink)
class CrowdLinkAdmin(admin.ModelAdmin):
    list_display = ["invite", "platform", "id_parameter", "config", "rule"]
    list_filter = ["platform", "rule"]
    raw_id_fields = ["invite", "config"]


@admin.register(CrowdWorker)
class CrowdWorkerAdmin(admin.ModelAdmin):
    list_display = ["worker_id", "platform", "campaign", "user", "completed_at", "code", "passed"]
    list_filter = ["platform", "passed"]
    search_fields = ["worker_id", "code"]
    raw_id_fields = ["campaign", "link", "user", "assignment"]
    # What a worker was shown is evidence for the platform's payment: not edited by hand.
    readonly_fields = ["created", "completed_at", "code", "passed", "qc"]


@admin.register(AnnotatorDecision)
class AnnotatorDecisionAdmin(admin.ModelAdmin):
    list_display = ["campaign", "annotator", "included", "reason", "decided_by", "decided_at"]
    raw_id_fields = ["campaign", "annotator", "decided_by"]


@admin.register(JudgmentImport)
class JudgmentImportAdmin(admin.ModelAdmin):
    list_display = ["file_name", "file_format", "campaign", "imported_by", "created"]
    list_filter = ["file_format"]
    raw_id_fields = ["campaign", "config", "imported_by"]
    readonly_fields = ["created"]


@admin.register(JudgmentImportJob)
class JudgmentImportJobAdmin(admin.ModelAdmin):
    list_display = ["pk", "file_name", "campaign", "status", "created", "finished"]
    list_filter = ["status"]
    list_select_related = ["campaign"]
    raw_id_fields = ["campaign", "result", "requested_by"]
    # The file itself (up to the upload limit) is not shown: it is dropped when the job ends.
    exclude = ["content"]
    readonly_fields = ["created", "started", "finished", "progressed"]

    def get_queryset(self, request: Any) -> Any:
        return super().get_queryset(request).defer("content")


@admin.register(AnnotatorPseudonym)
class AnnotatorPseudonymAdmin(admin.ModelAdmin):
    list_display = ["code", "campaign", "annotator"]
    raw_id_fields = ["campaign", "annotator"]


@admin.register(TutorialRule)
class TutorialRuleAdmin(admin.ModelAdmin):
    list_display = ["config", "pass_at_least", "on_fail", "attempts", "attention_check"]
    raw_id_fields = ["config"]


@admin.register(TutorialItem)
class TutorialItemAdmin(admin.ModelAdmin):
    list_display = ["config", "position", "source", "feedback"]
    raw_id_fields = ["config", "original"]


@admin.register(TutorialRun)
class TutorialRunAdmin(admin.ModelAdmin):
    list_display = ["config", "annotator", "status", "attempt", "items_met", "items_done"]
    list_filter = ["status"]
    raw_id_fields = ["config", "annotator"]
    readonly_fields = ["started", "finished"]


@admin.register(TutorialAnswer)
class TutorialAnswerAdmin(admin.ModelAdmin):
    list_display = ["run", "attempt", "position", "met", "submitted_at"]
    raw_id_fields = ["run", "item"]
    readonly_fields = ["submitted_at"]
