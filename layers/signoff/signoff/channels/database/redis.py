"""The Redis channel: push each pending approval onto a list, for a dashboard or worker.

Approval-only, like loopengine's ``RedisQueueApprover``: an ``approval`` notification
becomes the JSON of a ``PendingApprovalRow`` (the same record the database channel
inserts), pushed with ``LPUSH`` so a worker takes the oldest with ``RPOP`` /
``BRPOP``; every other kind is accepted and does nothing.

The push is idempotent. One Lua script checks a marker key named after the
idempotency key, pushes, and sets the marker with a TTL — atomically, since Redis
runs a script alone — so a retry with the same key never pushes twice. The
marker shares the list's hash slot (a ``{queue}`` hash tag), which keeps the
script valid on Redis Cluster.

Failures: the server could not be reached, timed out, or is loading / read-only
→ retryable ``SendFailed``; wrong credentials, a missing ACL permission or a key
of the wrong type → permanent.

``redis`` (the ``signoff[redis]`` extra) is imported only by this module's
functions, so the engine layer runs without it.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Self

from signoff.channels.base import Delivery
from signoff.channels.database.rows import approval_row, require_extra
from signoff.channels.settings.redis import DEFAULT_QUEUE_KEY
from signoff.errors import SendFailed

if TYPE_CHECKING:
    import redis

    from signoff.channels.build import BuildContext
    from signoff.channels.notification import Notification
    from signoff.channels.settings.redis import RedisSettings
    from signoff.clock import Clock

__all__ = ["DEFAULT_QUEUE_KEY", "RedisChannel"]
# Longer than SQS keeps a message (4 days by default) plus the sweeper's re-sends,
# so every retry of a send still finds its marker; short enough not to pile up.
DEFAULT_MARKER_TTL = timedelta(days=7)

# KEYS[1] the marker, KEYS[2] the list; ARGV[1] the row's JSON, ARGV[2] the TTL in
# seconds. The push comes before the marker: should it fail (a key of the wrong
# type), no marker is left behind to swallow the retry.
_PUSH_ONCE = """
if redis.call('EXISTS', KEYS[1]) == 1 then
    return 0
end
redis.call('LPUSH', KEYS[2], ARGV[1])
redis.call('SET', KEYS[1], '1', 'EX', tonumber(ARGV[2]))
return 1
"""


class RedisChannel:
    """Pushes a ``PendingApprovalRow`` onto a Redis list, once per idempotency key."""

    def __init__(
        self,
        name: str,
        client: redis.Redis,
        queue_key: str = DEFAULT_QUEUE_KEY,
        *,
        clock: Clock,
        environment: str | None = None,
        marker_ttl: timedelta = DEFAULT_MARKER_TTL,
    ) -> None:
        """``environment`` is the deployment's, for the row's scope.

        Raises:
            ValueError: ``queue_key`` holds a brace (it becomes the marker's hash tag).
        """
        if "{" in queue_key or "}" in queue_key:
            raise ValueError(f"queue key {queue_key!r} may not contain braces")
        self.name = name
        self.queue_key = queue_key
        self.environment = environment
        self.marker_ttl = marker_ttl
        self._client = client
        self._clock = clock
        # Registering sends nothing: the script is loaded by its first EVALSHA.
        self._push_once = client.register_script(_PUSH_ONCE)

    def __repr__(self) -> str:
        return f"RedisChannel(name={self.name!r}, queue_key={self.queue_key!r})"

    @classmethod
    def from_config(
        cls,
        settings: RedisSettings,
        context: BuildContext,
        *,
        name: str = "redis",
    ) -> Self:
        """The channel ``name`` from its settings, its URL read from ``secrets`` now.

        Raises:
            SecretMissing: the URL secret does not exist.
            StoreUnavailable: the secret source failed transiently.
        """
        require_extra("redis", channel="redis", extra="redis")
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        client = redis.Redis.from_url(
            context.secrets.get(settings.url.secret),
            socket_connect_timeout=settings.timeout_seconds,
            socket_timeout=settings.timeout_seconds,
            # One immediate retry covers a pooled connection that went stale while
            # the Lambda sandbox was frozen; longer outages go back to SQS, whose
            # redelivery is the backoff (the client's default would wait ~10 s).
            retry=Retry(NoBackoff(), 1),
        )
        return cls(
            name,
            client,
            settings.queue_key,
            clock=context.clock,
            environment=context.environment,
        )

    def marker_key(self, idempotency_key: str) -> str:
        """The key that records a finished push; ``{queue}`` keeps it in the list's slot."""
        return f"{{{self.queue_key}}}:sent:{idempotency_key}"

    def notify(
        self, notification: Notification, idempotency_key: str, previous: Delivery | None = None
    ) -> Delivery:
        """Push the approval's row once per idempotency key; other kinds do nothing.

        ``previous`` is not needed: the marker key makes a repeated push a no-op.

        Raises:
            SendFailed: retryable when Redis could not be reached, timed out or is
                loading / read-only, permanent when it refused the credentials or command.
        """
        row = approval_row(
            notification, channel=self.name, environment=self.environment, clock=self._clock
        )
        if row is None:
            return Delivery()
        import redis

        keys = [self.marker_key(idempotency_key), self.queue_key]
        ttl = max(1, int(self.marker_ttl.total_seconds()))
        try:
            self._push_once(keys=keys, args=[row.model_dump_json(by_alias=True), ttl])
        except redis.RedisError as exc:
            raise self._failed(exc) from exc
        return Delivery(receipt={"queue": self.queue_key})

    def _failed(self, exc: redis.RedisError) -> SendFailed:
        import redis.exceptions as errors

        # Checked first: redis-py makes both a subclass of ConnectionError.
        refused = (errors.AuthenticationError, errors.AuthorizationError)
        transient = (
            errors.ConnectionError,  # refused, reset, DNS; includes BusyLoadingError
            errors.TimeoutError,
            errors.ReadOnlyError,  # a replica promoted mid-failover
            errors.TryAgainError,
            errors.ClusterDownError,
        )
        retryable = not isinstance(exc, refused) and isinstance(exc, transient)
        # redis-py's messages name host and port, never the password.
        return SendFailed(self.name, f"{type(exc).__name__}: {exc}", retryable=retryable)
