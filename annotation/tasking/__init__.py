"""Annotation tasks: planning and building them (in the background), assigning them, invites."""
