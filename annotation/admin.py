from __future__ import annotations

from django.contrib import admin

from annotation.models import (
    Campaign,
    Document,
    Reference,
    Run,
    Segment,
    System,
    Translation,
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
    list_display = ["name", "campaign", "created"]
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
