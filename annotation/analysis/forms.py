"""Forms of the analysis pages: analysis settings, include/exclude decisions, judgment import."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.analysis.settings import (
    PRESETS,
    RESAMPLES_MAX,
    RESAMPLES_MIN,
    TRUESKILL_RUNS_MAX,
    AnalysisSettings,
)
from annotation.campaigns.uploads import UploadError
from annotation.judgment_import.formats import (
    FORMAT_AUTO,
    judgment_format_choices,
    system_map_parse,
)
from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.standardised import SCORES_AUTO, score_kind_choices
from annotation.judgment_import.wmt_segments import NUMBERING_AUTO, segment_numbering_choices
from annotation.protocols import protocol_choices

DEFAULTS = AnalysisSettings()
# The name of the settings form's submit button (in the query string of what it sends).
SUBMITTED = "analyse"

QC_TEST_CHOICES = [
    ("paired_t", _("paired t-test (original DA scripts)")),
    ("wilcoxon", _("Wilcoxon signed-rank")),
    ("mannwhitney", _("Mann–Whitney U, unpaired (Appraise, WMT)")),
]
SIGNIFICANCE_CHOICES = [
    ("wilcoxon", _("Wilcoxon signed-rank")),
    ("sign", _("sign test")),
    ("mannwhitney", _("Mann–Whitney U (WMT DA)")),
    ("bootstrap", _("paired bootstrap")),
    ("ar", _("approximate randomisation")),
]
SPACE_CHOICES = [
    ("kind", _("the kind's own: raw points for ESA and MQM, z-scores for the others")),
    ("z", _("z-scores")),
    ("shifted", _("mean-shifted")),
    ("raw", _("raw")),
]
BASIS_CHOICES = [
    ("real_and_repeat", _("real and repeat items")),
    ("all", _("all items (as the original DA scripts)")),
]
PRESET_CHOICES = [
    ("evalsite", _("EvalSite defaults")),
    ("wmt", _("WMT: z over all scores, Mann–Whitney U, failed annotators kept")),
]
assert [key for key, _label in PRESET_CHOICES] == list(PRESETS)
NAME_CHOICES = [("pseudonyms", _("pseudonyms (A001, …)")), ("real", _("usernames"))]


class AnalysisSettingsForm(forms.Form):
    """The analysis settings, read from the query string (GET), so links carry them; shown
    unbound with the campaign's setting (:meth:`for_settings`)."""

    @classmethod
    def for_settings(cls, settings: AnalysisSettings, names: str = "") -> AnalysisSettingsForm:
        """An unbound form showing ``settings`` as they apply (a preset's conventions in
        their fields), and how reports name annotators."""
        initial = {k: v for k, v in settings.as_dict().items() if v is not None}
        if names:
            initial["names"] = names
        return cls(initial=initial)

    qc_test = forms.ChoiceField(
        label=_("QC test"), choices=QC_TEST_CHOICES, initial=DEFAULTS.qc_test, required=False
    )
    qc_space = forms.ChoiceField(
        label=_("QC on"),
        choices=[("raw", _("raw scores")), ("z", _("z-scores"))],
        initial=DEFAULTS.qc_space,
        required=False,
    )
    ranking_qc_space = forms.ChoiceField(
        label=_("QC on (rankings)"),
        choices=[("rank", _("ranks")), ("normalised_rank", _("ranks normalised by screen size"))],
        initial=DEFAULTS.ranking_qc_space,
        required=False,
    )
    threshold = forms.FloatField(
        label=_("QC threshold (p ≤)"),
        min_value=0.0001,
        max_value=0.5,
        initial=DEFAULTS.threshold,
        required=False,
    )
    basis = forms.ChoiceField(
        label=_("Normalise over"), choices=BASIS_CHOICES, initial=DEFAULTS.basis, required=False
    )
    include_failed = forms.BooleanField(
        label=_("Keep annotators who failed QC"), required=False, label_suffix=""
    )
    exclude_untested = forms.BooleanField(
        label=_("Leave out annotators QC could not test"), required=False, label_suffix=""
    )
    space = forms.ChoiceField(
        label=_("System scores in"), choices=SPACE_CHOICES, initial=DEFAULTS.space, required=False
    )
    test = forms.ChoiceField(
        label=_("Significance test"),
        choices=SIGNIFICANCE_CHOICES,
        initial=DEFAULTS.test,
        required=False,
    )
    alpha = forms.FloatField(
        label=_("Cluster level α"),
        min_value=0.0001,
        max_value=0.5,
        initial=DEFAULTS.alpha,
        required=False,
    )
    confidence = forms.FloatField(
        label=_("Confidence"),
        min_value=0.5,
        max_value=0.999,
        initial=DEFAULTS.confidence,
        required=False,
    )
    resamples = forms.IntegerField(
        label=_("Bootstrap resamples"),
        min_value=RESAMPLES_MIN,
        max_value=RESAMPLES_MAX,
        initial=DEFAULTS.resamples,
        required=False,
        help_text=_("The campaign's one count: the metric analysis uses it too."),
    )
    trueskill_runs = forms.IntegerField(
        label=_("TrueSkill runs for rank ranges"),
        min_value=0,
        max_value=TRUESKILL_RUNS_MAX,
        initial=DEFAULTS.trueskill_runs,
        required=False,
    )
    seed = forms.IntegerField(
        label=_("Seed"),
        min_value=0,
        max_value=2**32 - 1,
        initial=DEFAULTS.seed,
        required=False,
        help_text=_("The campaign's one seed: the metric analysis uses it too."),
    )
    preset = forms.ChoiceField(
        label=_("Conventions"),
        choices=[("", _("as set below")), *PRESET_CHOICES],
        required=False,
        help_text=_("A preset sets the normalisation, the tests and who counts at once."),
    )
    names = forms.ChoiceField(
        label=_("Annotators in reports"),
        choices=NAME_CHOICES,
        initial="pseudonyms",
        required=False,
    )

    def settings(self, base: AnalysisSettings | None = None) -> AnalysisSettings:
        """The chosen settings; fields left empty keep those of ``base`` (the campaign's
        setting; the defaults without it), and a chosen preset sets its conventions over
        them. Call after is_valid()."""
        # An unticked box is absent from a query string: a box counts when the settings form
        # itself was sent (its button's name) or the box is named, so that a link carrying a
        # few settings (?names=real) leaves the others as they are.
        whole_form = SUBMITTED in self.data
        data = {
            key: value
            for key, value in self.cleaned_data.items()
            if key not in ("names", "preset")
            and value not in (None, "")
            and (
                not isinstance(self.fields[key], forms.BooleanField)
                or whole_form
                or key in self.data
            )
        }
        chosen = replace(base or AnalysisSettings(), **data)
        preset = self.cleaned_data.get("preset")
        return chosen.with_preset(preset) if preset else chosen

    @property
    def real_names(self) -> bool:
        return self.cleaned_data.get("names") == "real"


class DecisionForm(forms.Form):
    """Include or exclude an annotator (with a reason), or clear the decision."""

    ACTIONS = [("include", _("Include")), ("exclude", _("Exclude")), ("clear", _("Clear"))]

    annotator = forms.IntegerField(widget=forms.HiddenInput)
    action = forms.ChoiceField(choices=ACTIONS)
    reason = forms.CharField(label=_("Reason"), max_length=2000, required=False, strip=True)

    def __init__(self, *args: Any, annotator_ids: set[int], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.annotator_ids = annotator_ids

    def clean_annotator(self) -> int:
        value = int(self.cleaned_data["annotator"])
        if value not in self.annotator_ids:
            raise forms.ValidationError(_("This person has no judgments in this campaign."))
        return value

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        if cleaned.get("action") in ("include", "exclude") and not cleaned.get("reason"):
            self.add_error("reason", _("Give a reason for the decision."))
        return cleaned


class JudgmentImportForm(forms.Form):
    """A file of historical judgments and how to read it."""

    # An empty file is refused by the import, naming it (the field's message names no file).
    file = forms.FileField(label=_("Judgments file"), allow_empty_file=True)
    file_format = forms.ChoiceField(
        label=_("Format"), choices=judgment_format_choices, initial=FORMAT_AUTO
    )
    protocol = forms.ChoiceField(
        label=_("Protocol"), choices=protocol_choices, initial="direct_assessment"
    )
    criterion = forms.CharField(
        label=_("Criterion"),
        max_length=20,
        required=False,
        help_text=_("For rows without a criterion column; empty: the protocol's first."),
    )
    line_base = forms.TypedChoiceField(
        label=_("Segment numbers count from"),
        choices=[(1, "1"), (0, "0")],
        coerce=int,
        initial=1,
    )
    segment_numbering = forms.ChoiceField(
        label=_("WMT segment ids count"),
        choices=segment_numbering_choices,
        initial=NUMBERING_AUTO,
        required=False,
        help_text=_(
            "WMT DA files carry no text: the import checks the numbering against the test "
            "set's documents and refuses one that does not fit."
        ),
    )
    scores = forms.ChoiceField(
        label=_("Scores"),
        choices=score_kind_choices,
        initial=SCORES_AUTO,
        required=False,
        help_text=_(
            "Standardised (z) scores, as some releases publish them only, are analysed as "
            "given: not standardised again, and without raw-score figures."
        ),
    )
    language_pair = forms.CharField(
        label=_("Language pair"),
        max_length=50,
        required=False,
        help_text=_("Only for a file with several pairs, as the file writes it (e.g. de-en)."),
    )
    name = forms.CharField(
        label=_("Name of the imported protocol"),
        max_length=90,
        required=False,
        help_text=_("Empty: “Imported: <file name>”."),
    )
    system_map = forms.CharField(
        label=_("System names"),
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=100_000,
        required=False,
        help_text=_(
            "Where the file names systems otherwise than the campaign: one per line, "
            "“name in the file = name in the campaign” (e.g. HuaweiTSC.5 = HuaweiTSC)."
        ),
    )

    document_score = forms.BooleanField(
        label=_("Document-level score"),
        required=False,
        help_text=_(
            "Document screens with a document-level score: the file's whole-document rows "
            "(Appraise) become document judgments."
        ),
    )

    def clean_system_map(self) -> dict[str, str]:
        try:
            return system_map_parse(self.cleaned_data["system_map"])
        except UploadError as exc:
            raise forms.ValidationError([str(p) for p in exc.problems]) from None

    def options(self) -> ImportOptions:
        data = self.cleaned_data
        return ImportOptions(
            file_format=data["file_format"],
            protocol=data["protocol"],
            criterion=data["criterion"].strip(),
            line_base=data["line_base"],
            language_pair=data["language_pair"].strip(),
            system_map=data["system_map"],
            name=data["name"].strip(),
            document_score=data["document_score"],
            segment_numbering=data["segment_numbering"] or NUMBERING_AUTO,
            scores=data["scores"] or SCORES_AUTO,
        )
