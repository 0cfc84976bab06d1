"""Django's PostgreSQL backend with a health check that costs no round trip when idle.

With ``CONN_HEALTH_CHECKS`` Django tests a persistent connection before each request reuses it,
with ``SELECT 1``: one more round trip on every request, the annotation hot path included. An
idle connection has nothing to read, though. When the server ends it (a restart, a crash, an
administrator's terminate) the socket becomes readable: a termination notice, or the end of the
stream. So the check first polls the socket without waiting; only a readable one (or one psycopg
already knows is broken or closed) gets the real test.
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self) -> bool:
        connection = self.connection
        if connection is None or connection.closed or connection.broken:
            return False
        try:
            poller = select.poll()
            poller.register(connection.fileno(), select.POLLIN)
            pending = poller.poll(0)
        except (OSError, ValueError):
            return False
        if not pending:
            return True
        # Something arrived on an idle connection: let the real test read it.
        return bool(super().is_usable())
