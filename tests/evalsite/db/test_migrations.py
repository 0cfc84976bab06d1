"""The migrations match the models: a model change without its migration fails here, not on an
organizer's upgrade (``manage.py migrate`` would leave the database behind the code)."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_no_model_change_lacks_a_migration() -> None:
    out = io.StringIO()
    # --check exits 1 when a migration would be written; --dry-run writes none.
    call_command("makemigrations", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()
