"""Reports of the human-judgment analysis: judgments, systems, annotators (CSV, JSON, LaTeX)."""
