"""Campaigns, their data and its import; annotation tasks and judgments come in later modules."""
