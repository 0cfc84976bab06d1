"""Import of historical judgments onto a campaign that already holds the texts."""
