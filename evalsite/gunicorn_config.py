"""gunicorn's settings for the web service (``gunicorn --config python:evalsite.gunicorn_config``).

The number of web worker processes comes from ``WEB_CONCURRENCY``, the variable gunicorn itself
knows; read here through our helpers, so 0 or a negative count stops the start naming the
variable instead of starting a server without workers. gunicorn's own reading of it already
refuses a value that is not a whole number.
"""

from __future__ import annotations

from evalsite.env import Env

env = Env.from_os()

# Synchronous workers: one request at a time each, so this is the number of requests served at
# once per machine (about two per CPU core; PostgreSQL's max_connections must cover them all).
workers = env.integer("WEB_CONCURRENCY", 3, minimum=1)
