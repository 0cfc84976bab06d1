"""gunicorn's settings for the web service (``gunicorn --config python:evalsite.gunicorn_config``).

The number of web worker processes comes from ``WEB_CONCURRENCY``, the variable gunicorn itself
knows; read here through our helpers, so 0 or a negative count stops the start naming the
variable instead of starting a server without workers. gunicorn's own reading of it already
refuses a value that is not a whole number.

Each worker runs Python's cycle collector less often than by default (``GC_THRESHOLD``): every
request leaves reference cycles behind (Django's and DRF's request and response objects refer
to each other), and with the default first-generation threshold of 700 the collector ran about
once per request, in the middle of one, scanning and promoting the live objects of that request.
With 20,000 it runs about every twenty requests, when most of their objects are gone. In
``benchmarks/submit_cost.py`` (four alternating runs each) a submit took 5-6 % less CPU time;
callgrind counts only 0.4 % fewer instructions, so the saving is in time (the collector's scans
walk memory), not in the instruction count.
"""

from __future__ import annotations

import gc
from typing import Any

from evalsite.env import Env

env = Env.from_os()

# Synchronous workers: one request at a time each, so this is the number of requests served at
# once per machine (about two per CPU core; PostgreSQL's max_connections must cover them all).
workers = env.integer("WEB_CONCURRENCY", 3, minimum=1)

# (first, second, third generation): see the docstring.
GC_THRESHOLD = (20_000, 20, 20)


def post_fork(server: Any, worker: Any) -> None:
    gc.set_threshold(*GC_THRESHOLD)
