"""REST API of the human-judgment analysis: the analysis as JSON, the reports, the judgment
import (multipart) and include/exclude decisions. Owner and co-organizers only."""

from __future__ import annotations

from typing import Any

from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.analysis.documents import campaign_document_scores
from annotation.analysis.query import CampaignAPIView
from annotation.analysis.selectors import campaign_analysis_settings
from annotation.analysis.serializers import (
    SETTINGS_PARAMETERS,
    SettingsFieldsSerializer,
)
from annotation.analysis.services import (
    annotator_decision_clear,
    annotator_decision_record,
    annotator_pseudonyms_ensure,
    campaign_analysis_settings_save,
)
from annotation.analysis.settings import (
    AnalysisSettings,
)
from annotation.analysis.shown import (
    PROVENANCE_HEADER,
    provenance,
)
from annotation.analysis.spans import campaign_span_summaries
from annotation.campaigns.uploads import UploadError, upload_file_read
from annotation.judgment_import.background import (
    judgment_import_request,
    judgment_import_state,
    judgment_imports_abandon_stale,
)
from annotation.judgment_import.formats import (
    judgment_file_refuse_empty,
)
from annotation.judgment_import.serializers import ImportRequestSerializer, problems_response
from annotation.judgment_import.services import judgments_preview
from annotation.models import AnnotatorPseudonym, JudgmentImportJob, pseudonym_code
from annotation.permissions import signed_in


class AnalysisView(CampaignAPIView):
    @extend_schema(
        parameters=SETTINGS_PARAMETERS,
        responses=OpenApiTypes.OBJECT,
        description="Per protocol and criterion: annotator QC, system scores with t and "
        "bootstrap intervals, ranks, clusters, the significance matrix, agreement with counts, "
        "and the method (settings, seed, code version). Annotators by pseudonym unless "
        "names=real.",
    )
    def get(self, request: Request, campaign_id: Any) -> Response:
        campaign = self.campaign(request, campaign_id)
        settings, serializer = self.chosen_settings(request, campaign)
        shown = self.analysis(campaign, settings)
        assert shown.analysis is not None
        return Response(
            shown.analysis.to_json(usernames="in_place" if serializer.real_names else "omitted"),
            headers={PROVENANCE_HEADER: provenance(shown)},
        )


class SpanSummaryView(CampaignAPIView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "names",
                str,
                enum=["pseudonyms", "real"],
                description="How annotators are named: pseudonyms (A001, …, the default) or "
                "usernames.",
            )
        ],
        responses=OpenApiTypes.OBJECT,
        description="Per protocol of an error-span kind (ESA, MQM): errors per system by "
        "severity and category, agreement on spans between annotators and within one "
        "(character-level F1 and Cohen's κ, pooled over pairs), and per annotator the bad "
        "references whose degraded part they marked.",
    )
    def get(self, request: Request, campaign_id: Any) -> Response:
        campaign = self.campaign(request, campaign_id)
        names = None
        if request.query_params.get("names") != "real":
            numbers = annotator_pseudonyms_ensure(campaign=campaign)
            names = {user: pseudonym_code(n) for user, n in numbers.items()}
        return Response(
            {"protocols": [s.as_json(names) for s in campaign_span_summaries(campaign=campaign)]}
        )


class DocumentScoresView(CampaignAPIView):
    @extend_schema(
        parameters=SETTINGS_PARAMETERS,
        responses=OpenApiTypes.OBJECT,
        description="Per protocol with document-level scores (document screens that ask for "
        "one): per system the mean raw and z score over the windows shown, with percentile "
        "bootstrap intervals over windows, from the annotators the protocol's segment-level "
        "analysis includes; the counts, basis, confidence, resamples and seed. Never mixed "
        "into the segment-level analysis.",
    )
    def get(self, request: Request, campaign_id: Any) -> Response:
        campaign = self.campaign(request, campaign_id)
        settings, _serializer = self.chosen_settings(request, campaign)
        summaries = campaign_document_scores(campaign=campaign, settings=settings)
        return Response({"protocols": [s.as_json() for s in summaries]})


def settings_document(settings: AnalysisSettings) -> dict[str, Any]:
    """The campaign's analysis setting as the API gives it: its fields and its preset."""
    return {"settings": settings.as_dict(), "preset": settings.preset}


class AnalysisSettingsView(CampaignAPIView):
    @extend_schema(
        responses=OpenApiTypes.OBJECT,
        description="The campaign's analysis setting (every field, and the preset whose "
        "conventions it follows, if any): what the analysis, the reports and the background "
        "results use when a request names no other.",
    )
    def get(self, request: Request, campaign_id: Any) -> Response:
        campaign = self.campaign(request, campaign_id)
        return Response(settings_document(campaign_analysis_settings(campaign=campaign)))

    @extend_schema(
        request=SettingsFieldsSerializer,
        responses=OpenApiTypes.OBJECT,
        description="Change the campaign's analysis setting: the fields given (and a preset's "
        "conventions) over the current ones. A change schedules the recomputation of the "
        "campaign's stored results.",
    )
    def put(self, request: Request, campaign_id: Any) -> Response:
        campaign = self.campaign(request, campaign_id)
        serializer = SettingsFieldsSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        settings = serializer.settings(campaign_analysis_settings(campaign=campaign))
        changed = campaign_analysis_settings_save(campaign=campaign, settings=settings)
        return Response({**settings_document(settings), "changed": changed})


IMPORT_JOB = inline_serializer(
    "JudgmentImportJob",
    {
        "id": serializers.UUIDField(),
        "status": serializers.ChoiceField(choices=["queued", "running", "done", "failed"]),
        "status_label": serializers.CharField(),
        "active": serializers.BooleanField(),
        "file_name": serializers.CharField(),
        "stage": serializers.CharField(help_text="The step under way, in words."),
        "step": serializers.IntegerField(),
        "steps": serializers.IntegerField(),
        "percent": serializers.IntegerField(),
        "message": serializers.CharField(),
        "error": serializers.CharField(),
        "problems": serializers.ListField(
            child=serializers.DictField(),
            help_text="A refused file's problems: file, line, message.",
        ),
        "import": inline_serializer(
            "JudgmentImport",
            {
                "id": serializers.IntegerField(),
                "protocol_config": serializers.IntegerField(),
                "name": serializers.CharField(),
                "file_format": serializers.CharField(),
                "summary": serializers.DictField(),
            },
            allow_null=True,
        ),
        "created": serializers.DateTimeField(),
        "finished": serializers.DateTimeField(allow_null=True),
    },
)


class JudgmentImportView(CampaignAPIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": ImportRequestSerializer},
        responses={
            200: inline_serializer(
                "JudgmentImportPreview",
                {
                    "file_format": serializers.CharField(),
                    "rows": serializers.IntegerField(),
                    "judgments": serializers.IntegerField(),
                    "annotators": serializers.IntegerField(),
                    "systems": serializers.ListField(child=serializers.DictField()),
                },
            ),
            202: IMPORT_JOB,
        },
        description="Import historical judgments (EvalSite table, Appraise CSV export, WMT "
        "DA judgments or Google's MQM TSV with error spans) onto a campaign that has the "
        "texts. The import runs in a worker: 202 with the job, whose URL (Location) tells "
        "how it goes; it is all or nothing, and a refused file's problems name file and line. "
        "With dry_run, 200 at once with what it would store (each of the file's system names "
        "and the campaign's system it maps to), storing nothing.",
    )
    def post(self, request: Request, campaign_id: Any) -> Response:
        campaign = self.campaign(request, campaign_id)
        serializer = ImportRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            upload = upload_file_read(
                serializer.validated_data["file"],
                max_bytes=django_settings.EVALSITE_UPLOAD_MAX_BYTES,
            )
            judgment_file_refuse_empty(upload)
            if serializer.validated_data["dry_run"]:
                # What the import would store, storing nothing.
                preview = judgments_preview(
                    campaign=campaign, upload=upload, options=serializer.options()
                )
                return Response(preview.as_json())
        except UploadError as exc:
            return problems_response(exc)
        job = judgment_import_request(
            campaign=campaign, upload=upload, options=serializer.options(), user=signed_in(request)
        )
        url = reverse("api-campaign-judgment-import-job", args=[campaign.pk, job.pk])
        return Response(
            judgment_import_state(job),
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": request.build_absolute_uri(url)},
        )


class JudgmentImportJobView(CampaignAPIView):
    @extend_schema(
        responses=IMPORT_JOB,
        description="An import sent with POST judgment-imports/: queued, running (the step "
        "under way), done (what it stored) or failed (the reason and a refused file's "
        "problems).",
    )
    def get(self, request: Request, campaign_id: Any, job_id: Any) -> Response:
        campaign = self.campaign(request, campaign_id)
        judgment_imports_abandon_stale(campaign=campaign)
        job = get_object_or_404(
            JudgmentImportJob.objects.select_related("result__config").defer("content"),
            campaign=campaign,
            pk=job_id,
        )
        return Response(judgment_import_state(job))


class DecisionSerializer(serializers.Serializer):
    annotator = serializers.CharField(
        max_length=150, help_text="The annotator's pseudonym (A001) or username."
    )
    action = serializers.ChoiceField(choices=["include", "exclude", "clear"])
    reason = serializers.CharField(max_length=2000, required=False, default="", allow_blank=True)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["action"] != "clear" and not attrs["reason"].strip():
            raise serializers.ValidationError({"reason": "give a reason for the decision"})
        return attrs


class DecisionView(CampaignAPIView):
    @extend_schema(
        request=DecisionSerializer,
        responses=inline_serializer(
            "AnnotatorDecision",
            {
                "annotator": serializers.CharField(),
                "included": serializers.BooleanField(allow_null=True),
                "reason": serializers.CharField(),
            },
        ),
        description="Include or exclude an annotator's judgments (overriding QC) with a "
        "reason, or clear the decision.",
    )
    def post(self, request: Request, campaign_id: Any) -> Response:
        campaign = self.campaign(request, campaign_id)
        serializer = DecisionSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        numbers = annotator_pseudonyms_ensure(campaign=campaign)
        by_code = {pseudonym_code(n): user_id for user_id, n in numbers.items()}
        given = serializer.validated_data["annotator"]
        user_model = get_user_model()
        user_id = by_code.get(given)
        if user_id is None:
            user_id = (
                user_model.objects.filter(**{user_model.USERNAME_FIELD: given}, pk__in=numbers)
                .values_list("pk", flat=True)
                .first()
            )
        if user_id is None:
            return Response(
                {"annotator": [f"{given} has no judgments in this campaign"]},
                status=status.HTTP_400_BAD_REQUEST,
            )
        annotator = user_model.objects.get(pk=user_id)
        action = serializer.validated_data["action"]
        if action == "clear":
            annotator_decision_clear(campaign=campaign, annotator=annotator)
            included = None
            reason = ""
        else:
            decision = annotator_decision_record(
                campaign=campaign,
                annotator=annotator,
                included=action == "include",
                reason=serializer.validated_data["reason"],
                decided_by=signed_in(request),
            )
            included, reason = decision.included, decision.reason
        code = AnnotatorPseudonym.objects.get(campaign=campaign, annotator=annotator).code
        return Response({"annotator": code, "included": included, "reason": reason})
