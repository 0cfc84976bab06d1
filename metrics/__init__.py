"""Automatic metrics, significance and correlations (a Django-free core in ``scoring`` and
``stats``), plus the background tasks that run them for campaigns."""
