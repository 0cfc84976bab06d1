"""EvalSite Django project: settings, URLs, the Celery app and the WSGI entry point."""

from __future__ import annotations

from evalsite.celery import app as celery_app

__all__ = ["celery_app"]
