"""A worker that holds a task when Redis goes away reconnects instead of exiting.

When the connection to Redis breaks, Celery closes the old channel, which tries to put the
messages of the running tasks back on their queue, and later acknowledges each of those messages
when its task ends. Both need a Redis client, and kombu's Redis channel makes one from its
transport's connection settings — which closing the connection has already cleared. The result
is ``AttributeError: 'NoneType' object has no attribute 'hostname'``, an error Celery does not
know as a connection error, so the worker stops (kombu 5.7, celery 5.7).

:func:`redis_channel_patch` makes that case the connection error it is
(``redis.exceptions.ConnectionError``): Celery then ignores it while closing, logs a message it
"couldn't ack", and goes on reconnecting. Nothing is lost: a message Redis still holds
unacknowledged is delivered again after the visibility timeout (tasks are idempotent; analysis
jobs claim their steps with conditional updates), and one that a Redis restart without its disk
lost was finished by the task that held it.
"""

from __future__ import annotations

import functools
from typing import Any

_PATCHED = "_evalsite_closed_connection_is_a_connection_error"


def redis_channel_patch() -> None:
    """Make kombu's Redis channel raise a connection error, not an ``AttributeError``, when it
    needs a client after its connection was closed. Idempotent."""
    import redis
    from kombu.transport import redis as kombu_redis

    original: Any = kombu_redis.Channel._connparams
    if getattr(original, _PATCHED, False):
        return

    @functools.wraps(original)
    def connparams(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.connection is None or self.connection.client is None:
            raise redis.exceptions.ConnectionError(
                "the connection to Redis was closed (it went away); reconnecting"
            )
        return original(self, *args, **kwargs)

    setattr(connparams, _PATCHED, True)
    kombu_redis.Channel._connparams = connparams  # type: ignore[method-assign]
