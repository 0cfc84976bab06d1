"""Import of historical judgments onto a campaign that already holds the texts."""

# Layouts with a module of their own register their parser on import.
from annotation.judgment_import import appraise_spans as appraise_spans
from annotation.judgment_import import mqm_tsv as mqm_tsv
