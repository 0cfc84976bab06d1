"""What the judgment-import API reads: an import's fields, and a refused file's answer (the
analysis API's per-campaign import and the release API that builds a campaign share them)."""

from __future__ import annotations

from rest_framework import serializers, status
from rest_framework.response import Response

from annotation.campaigns.uploads import UploadError
from annotation.judgment_import.formats import FORMAT_AUTO, FORMATS, system_map_parse
from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.standardised import SCORE_KINDS, SCORES_AUTO
from annotation.judgment_import.wmt_segments import NUMBERING_AUTO, SEGMENT_NUMBERINGS
from annotation.protocols import PROTOCOLS


class ImportRequestSerializer(serializers.Serializer):
    # An empty file is refused by the import, naming it (DRF's message names no file).
    file = serializers.FileField(help_text="The judgments file.", allow_empty_file=True)
    file_format = serializers.ChoiceField(choices=[FORMAT_AUTO, *FORMATS], default=FORMAT_AUTO)
    protocol = serializers.ChoiceField(choices=list(PROTOCOLS), default="direct_assessment")
    criterion = serializers.CharField(max_length=20, required=False, default="", allow_blank=True)
    line_base = serializers.ChoiceField(choices=[0, 1], default=1)
    segment_numbering = serializers.ChoiceField(
        choices=list(SEGMENT_NUMBERINGS),
        default=NUMBERING_AUTO,
        help_text="What a WMT DA sid counts: upload (line in the test set as uploaded), sorted "
        "(position after sorting the documents by id, as WMT21's DA), auto (the one the "
        "file's documents single out; refused otherwise).",
    )
    scores = serializers.ChoiceField(
        choices=list(SCORE_KINDS),
        default=SCORES_AUTO,
        help_text="raw (checked against the criterion's scale), standardised (z-scores, taken "
        "as given and analysed without re-standardising) or auto (standardised when the scores "
        "leave the scale and look like z-scores).",
    )
    language_pair = serializers.CharField(
        max_length=50, required=False, default="", allow_blank=True
    )
    name = serializers.CharField(max_length=90, required=False, default="", allow_blank=True)
    system_map = serializers.CharField(
        max_length=100_000,
        required=False,
        default="",
        allow_blank=True,
        help_text="The file's system names that differ from the campaign's: one "
        "'name in the file = name in the campaign' per line.",
    )
    document_score = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Document screens with a document-level score: whole-document rows "
        "(Appraise) become document judgments.",
    )
    dry_run = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Check the file and answer what it would store (the system names as they "
        "map), storing nothing.",
    )

    def validate_system_map(self, text: str) -> dict[str, str]:
        try:
            return system_map_parse(text)
        except UploadError as exc:
            raise serializers.ValidationError([str(p) for p in exc.problems]) from None

    def options(self) -> ImportOptions:
        data = self.validated_data
        return ImportOptions(
            file_format=data["file_format"],
            protocol=data["protocol"],
            criterion=data["criterion"].strip(),
            line_base=int(data["line_base"]),
            language_pair=data["language_pair"].strip(),
            name=data["name"].strip(),
            system_map=data["system_map"],
            document_score=data["document_score"],
            segment_numbering=data["segment_numbering"],
            scores=data["scores"],
        )


def problems_response(exc: UploadError) -> Response:
    """400 with every problem of a refused import, each with its file and line."""
    return Response(
        {
            "detail": str(exc.problems[0]),
            "problems": [
                {"file": p.file, "line": p.line, "message": p.message} for p in exc.problems
            ],
        },
        status=status.HTTP_400_BAD_REQUEST,
    )


class ReleaseRequestSerializer(ImportRequestSerializer):
    """A release of judgments that builds its own campaign: the import's fields, the new
    campaign's name and languages, and the companion files that carry the texts."""

    dry_run = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Build the campaign and check the judgments, answer what would be stored "
        "(documents, segments, systems, the judgments' preview) and keep nothing.",
    )
    campaign_name = serializers.CharField(max_length=200, help_text="The new campaign's name.")
    source_language = serializers.CharField(
        max_length=35,
        required=False,
        default="",
        allow_blank=True,
        help_text="BCP-47; default: the release's, else 'und' (editable later).",
    )
    target_language = serializers.CharField(
        max_length=35, required=False, default="", allow_blank=True
    )
    batches = serializers.ListField(
        child=serializers.FileField(),
        required=False,
        default=list,
        help_text="Files carrying the release's texts (Appraise's batches).",
    )
