"""Crowd platforms (Prolific, Mechanical Turk, others): crowd invite links, worker accounts
bound to a platform id, completion codes."""
