"""WSGI entry point (gunicorn evalsite.wsgi)."""

from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
application = get_wsgi_application()
