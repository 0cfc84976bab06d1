"""Helpers the test modules share (test modules do not import each other)."""
