"""The upload form of the meta-evaluation page and API: files and options in, the table out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from annotation.campaigns.forms import MultipleFileField, NamedFileField
from annotation.campaigns.uploads import UploadError, UploadFile, upload_file_read
from metrics.metaeval.sources import HumanSource
from metrics.metaeval.uploads import UploadedMetaEvaluation, meta_evaluation_from_uploads

DEFAULT_SEED = 12345
FROM_FILE = "file"


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.replace("\n", ",").split(",") if name.strip()]


class MetaEvaluationForm(forms.Form):
    result: UploadedMetaEvaluation

    human_source = forms.ChoiceField(
        label=_("Human scores from"), initial=FROM_FILE, required=False
    )
    human = NamedFileField(
        label=_("Human scores"),
        required=False,
        help_text=_("A .sys.score file: one line per system, the system's name, a tab, its score."),
    )
    metrics = MultipleFileField(
        label=_("Metric scores"),
        required=False,
        help_text=_("One .sys.score file per metric; each metric is named after its file."),
    )
    human_segments = NamedFileField(
        label=_("Human segment scores"),
        required=False,
        help_text=_(
            "A .seg.score file: one line per segment, the system's name, a tab, its score "
            "(None where not scored); each system's lines together, in segment order."
        ),
    )
    metric_segments = MultipleFileField(
        label=_("Metric segment scores"),
        required=False,
        help_text=_("One .seg.score file per metric, its segments in the human file's order."),
    )
    human_systems = forms.CharField(
        label=_("Human translations"),
        required=False,
        help_text=_("System names, separated by commas: left out unless included below."),
    )
    include_human = forms.BooleanField(label=_("Include the human translations"), required=False)
    exclude_outliers = forms.BooleanField(
        label=_("Leave out outliers of the human scores (WMT20's rule)"), required=False
    )
    lower_is_better = forms.CharField(
        label=_("Lower is better"),
        required=False,
        help_text=_("Metric names, separated by commas, whose scores are errors (TER)."),
    )
    cluster_test = forms.ChoiceField(
        label=_("Clusters by"),
        choices=[("williams", _("Williams test")), ("permutation", _("Permutation test"))],
        initial="williams",
    )
    seed = forms.IntegerField(
        label=_("Seed"), min_value=0, max_value=2**32 - 1, initial=DEFAULT_SEED, required=False
    )

    def __init__(self, *args: Any, sources: Sequence[HumanSource] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sources = {source.key: source for source in sources}
        field = self.fields["human_source"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [
            (FROM_FILE, _("the uploaded file")),
            *((s.key, _("this campaign: %(label)s") % {"label": s.label}) for s in sources),
        ]

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        if self.errors:
            return cleaned
        limit = settings.EVALSITE_UPLOAD_MAX_BYTES
        if not cleaned.get("metrics") and not cleaned.get("metric_segments"):
            raise forms.ValidationError(
                _("Upload the metric scores: system-level files, segment-level files or both.")
            )
        human: UploadFile | dict[str, float] | None = None
        source = cleaned.get("human_source") or FROM_FILE
        if source != FROM_FILE:
            human = self.sources[source].scores
        elif cleaned.get("human"):
            human = upload_file_read(cleaned["human"], max_bytes=limit)
        elif cleaned.get("metrics"):
            raise forms.ValidationError(
                _("Upload the human scores, or choose a criterion of this campaign.")
            )
        if cleaned.get("metric_segments") and not cleaned.get("human_segments"):
            raise forms.ValidationError(_("Upload the human segment scores."))
        segments = cleaned.get("human_segments")
        try:
            self.result = meta_evaluation_from_uploads(
                human=human,
                human_segments=upload_file_read(segments, max_bytes=limit) if segments else None,
                metric_segments=[
                    upload_file_read(f, max_bytes=limit) for f in cleaned.get("metric_segments", [])
                ],
                metrics=[upload_file_read(f, max_bytes=limit) for f in cleaned["metrics"]],
                human_systems=_names(cleaned.get("human_systems") or ""),
                include_human=bool(cleaned.get("include_human")),
                exclude_outliers=bool(cleaned.get("exclude_outliers")),
                lower_is_better=_names(cleaned.get("lower_is_better") or ""),
                cluster_test=cleaned["cluster_test"],
                seed=DEFAULT_SEED if cleaned.get("seed") is None else cleaned["seed"],
                max_bytes=limit,
            )
        except UploadError as error:
            raise forms.ValidationError([str(problem) for problem in error.problems]) from None
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None
        return cleaned

    def evaluation(self) -> UploadedMetaEvaluation:
        """The result of a valid form."""
        return self.result
