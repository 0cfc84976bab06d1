"""The demo campaign: its text and simulated judgments."""
