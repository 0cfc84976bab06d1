"""Campaigns and their data: creating and editing them, uploading source, references and system
outputs."""
