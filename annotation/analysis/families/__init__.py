"""Analysis families: how a protocol kind's judgments become one criterion's analysis, and
everything that reads that analysis per family (QC, reports, correlations, pages)."""
