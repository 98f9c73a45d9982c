"""The console channel: one line per notification on stdout or a logger (send-only).

Useful locally and in tests: nothing to configure, nothing to reach. The line
carries the notification's idempotency key, so a retry after an unrecorded send
is visible as the same key printed twice (a console cannot take a line back).
Defined implicitly under the name ``console`` (``IMPLICIT_CHANNELS``), so an
agent can say ``notify: console`` without a ``channels.yaml`` entry.
"""

from __future__ import annotations

import errno
import logging
import sys
import threading
from typing import TYPE_CHECKING, Any, Final, Self, TextIO

from signoff.channels.base import Delivery
from signoff.errors import SendFailed

if TYPE_CHECKING:
    from signoff.channels.notification import Notification
    from signoff.channels.settings.console import ConsoleSettings

__all__ = ["ConsoleChannel", "console_line"]

_log = logging.getLogger("signoff.console")

# A stream that may take the line on a later try: a non-blocking pipe that is
# full, an interrupted call, a full disk. Anything else (a closed pipe or file,
# a bad descriptor) stays broken until someone fixes the output.
_TRANSIENT: Final = frozenset({errno.EAGAIN, errno.EWOULDBLOCK, errno.EINTR, errno.ENOSPC})


def console_line(notification: Notification, idempotency_key: str, *, links: bool = False) -> str:
    """``[kind] agent run: title (key)``, and (``links``) the page to decide from."""
    line = (
        f"[{notification.kind}] {notification.agent} {notification.run_id}: "
        f"{notification.title} ({idempotency_key})"
    )
    if links and notification.link_url:
        line += f" {notification.link_url}"
    # One notification, one line: a body or title with newlines would read as several.
    return " ".join(line.splitlines())


class ConsoleChannel:
    """Writes each notification as one line to ``stream`` (stdout), or logs it (``to_log``)."""

    def __init__(
        self, name: str, stream: TextIO | None = None, *, to_log: bool = False, links: bool = False
    ) -> None:
        self.name = name
        self._stream = stream
        self._to_log = to_log
        # The link carries a resume token: whoever reads the line (deployed: the
        # CloudWatch logs) can decide with it, so a deployment may leave it out.
        self._links = links
        self._lock = threading.Lock()  # the notifier sends from a thread pool: whole lines

    @classmethod
    def from_config(cls, settings: ConsoleSettings, context: Any, *, name: str = "console") -> Self:
        """The channel ``channels.yaml`` describes (``output: stdout`` or ``log``, ``links``)."""
        return cls(name, to_log=settings.output == "log", links=settings.links)

    def notify(
        self, notification: Notification, idempotency_key: str, previous: Delivery | None = None
    ) -> Delivery:
        """Print (or log) one line for ``notification``.

        Logging never raises here (a failing handler reports to stderr itself).

        Raises:
            SendFailed: the stream refused the line (retryable when it may take it later).
        """
        line = console_line(notification, idempotency_key, links=self._links)
        if self._to_log:
            _log.info(line, extra={"channel": self.name, "idempotency_key": idempotency_key})
            return Delivery()
        with self._lock:
            stream = self._stream or sys.stdout  # looked up now: tests capture sys.stdout
            try:
                stream.write(line + "\n")
                stream.flush()
            except OSError as exc:
                # Translated at the edge like any channel's failure, so the outbox
                # retries or fails this row instead of the error escaping the batch.
                reason = f"writing the line failed: {exc.strerror or exc}"
                raise SendFailed(self.name, reason, retryable=exc.errno in _TRANSIENT) from exc
            except ValueError as exc:
                # A closed stream, or a line its encoding cannot carry: never on a retry.
                raise SendFailed(
                    self.name, f"the stream refused the line: {exc}", retryable=False
                ) from exc
        return Delivery()
