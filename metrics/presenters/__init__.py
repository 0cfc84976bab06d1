"""Presenters of the campaign dashboard: stored result documents turned into rows, panels and plots
for templates (no database access)."""
