"""Forms of the organizer's tutorial page: one item, a file of items, the rule."""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.models import ProtocolConfig, TutorialRule
from annotation.tutorial.expectations import (
    ONLY_SPANS,
    ORDER,
    SCORES,
    SPANS,
    range_criteria,
)
from annotation.tutorial.items import tutorial_item_problems

# "1: 4-9 major accuracy/omission": output, characters, severity, optional category.
_SPAN_LINE = re.compile(r"^\s*(\d+)\s*:\s*(\d+)\s*[-–]\s*(\d+)\s*(\S+)?\s*(\S+)?\s*$")


class TutorialItemForm(forms.Form):
    """One tutorial item, its expectation given in fields (a range, an order, spans) that
    become the expectation JSON of ``annotation.tutorial.expectations``."""

    source = forms.CharField(
        label=_("Source"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )
    reference = forms.CharField(
        label=_("Reference"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )
    outputs = forms.CharField(
        label=_("Outputs"),
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("One translation per line (numbered 1, 2, … on the screen)."),
    )
    criterion = forms.ChoiceField(label=_("Score range: criterion"), required=False)
    low = forms.FloatField(label=_("Lowest expected score"), required=False)
    high = forms.FloatField(label=_("Highest expected score"), required=False)
    order = forms.CharField(
        label=_("Expected order, best first"),
        required=False,
        max_length=100,
        help_text=_("Output numbers, e.g. “2 1 3”: 2 judged better than 1, 1 better than 3."),
    )
    spans = forms.CharField(
        label=_("Expected error spans"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_(
            "Marked with the mouse above, or typed one per line: output: start-end [severity "
            "[category]], characters counted from 0, e.g. “1: 4-9 major”. A marked span that "
            "overlaps it (with that severity) meets it."
        ),
    )
    only_spans = forms.BooleanField(
        label=_("No other errors may be marked"),
        required=False,
        help_text=_("With no spans listed: the translation has no errors to mark."),
    )
    feedback = forms.CharField(
        label=_("Feedback"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_(
            "Shown after the answer, e.g. “This translation drops a clause: it should score low.”"
        ),
    )

    def __init__(self, *args: Any, config: ProtocolConfig, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.config = config
        protocol = config.definition
        shown = max(1, config.outputs_per_screen if not protocol.single_output else 1)
        criteria = range_criteria(protocol, shown)
        criterion = self.fields["criterion"]
        assert isinstance(criterion, forms.ChoiceField)  # declared one above
        criterion.choices = [("", "—")] + [(c.key, c.label) for c in criteria.values()]
        mode = protocol.mode(config.mode)
        if not mode.shows_source:
            del self.fields["source"]
        if not mode.shows_reference:
            del self.fields["reference"]
        if not protocol.marks_spans:
            del self.fields["spans"]
            del self.fields["only_spans"]
        if protocol.single_output:
            del self.fields["order"]

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        outputs = [line.strip() for line in data.get("outputs", "").splitlines() if line.strip()]
        expectation: dict[str, Any] = {}
        if data.get("criterion"):
            low, high = data.get("low"), data.get("high")
            if low is None or high is None:
                raise forms.ValidationError(_("Give the lowest and the highest expected score."))
            expectation[SCORES] = {
                str(n): {data["criterion"]: [low, high]} for n in range(1, len(outputs) + 1)
            }
        if data.get("order"):
            try:
                expectation[ORDER] = [int(n) for n in re.split(r"[\s,>]+", data["order"].strip())]
            except ValueError:
                self.add_error("order", _("Output numbers separated by spaces."))
        if data.get("spans") or data.get("only_spans"):
            expectation[SPANS] = self._spans(data.get("spans", ""))
            expectation[ONLY_SPANS] = bool(data.get("only_spans"))
        item = {
            "source": data.get("source", ""),
            "reference": data.get("reference", ""),
            "outputs": outputs,
            "expectation": expectation,
            "feedback": data.get("feedback", ""),
        }
        if not self.errors:
            for problem in tutorial_item_problems(config=self.config, data=item):
                self.add_error(None, problem)
        data["item"] = item
        return data

    def _spans(self, text: str) -> dict[str, list[dict[str, Any]]]:
        spans: dict[str, list[dict[str, Any]]] = {}
        for line in text.splitlines():
            if not line.strip():
                continue
            match = _SPAN_LINE.match(line)
            if match is None:
                self.add_error(
                    "spans", _("“%(line)s” is not “output: start-end severity”.") % {"line": line}
                )
                continue
            output, start, end, severity, category = match.groups()
            span: dict[str, Any] = {"start": int(start), "end": int(end)}
            if severity:
                span["severity"] = severity
            if category:
                span["category"] = category
            spans.setdefault(output, []).append(span)
        return spans


class TutorialUploadForm(forms.Form):
    file = forms.FileField(
        label=_("File of tutorial items"),
        help_text=_(
            "JSON: a list of items {source, reference, outputs, expectation, feedback}. CSV: "
            "columns source, reference, output (output2, … for more), feedback, expectation "
            "(JSON). See docs/annotation.md."
        ),
    )
    replace = forms.BooleanField(label=_("Replace the tutorial's items"), required=False)


class TutorialRuleForm(forms.ModelForm):
    class Meta:
        model = TutorialRule
        fields = ["pass_at_least", "on_fail", "attempts", "stop_message", "attention_check"]
        widgets = {"stop_message": forms.Textarea(attrs={"rows": 2})}
