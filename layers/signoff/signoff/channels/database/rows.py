"""What the approval-only channels share: the record they store and when they store one.

The Redis and database channels hand a reader the same ``PendingApprovalRow`` —
pushed as JSON onto a list, or inserted as a table row — for ``approval``
notifications only, and accept every other kind without sending anything. The
record, that kind check and the check for the channel's optional extra live
here once; each channel keeps its own write and its own failure translation.
"""

import importlib
from datetime import datetime
from typing import TYPE_CHECKING, Any, Self

from pydantic import BaseModel, ConfigDict, field_serializer
from pydantic.alias_generators import to_camel

from signoff.clock import iso
from signoff.errors import SendFailed

if TYPE_CHECKING:
    from signoff.channels.notification import Notification
    from signoff.clock import Clock

__all__ = ["ApprovalScope", "PendingApprovalRow", "approval_row", "require_extra"]


class ApprovalScope(BaseModel):
    """Where the approval was asked: the tenant, its environment and the agent."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    tenant: str | None
    environment: str | None
    agent: str


class PendingApprovalRow(BaseModel):
    """loopengine's ``PendingApprovalRow``: what a dashboard needs to show one approval."""

    model_config = ConfigDict(
        defer_build=True,
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
    )

    pending_id: str
    tool: str
    args: dict[str, Any]
    scope: ApprovalScope
    reason: str
    requested_at: datetime

    @field_serializer("requested_at")
    def _rfc3339(self, moment: datetime) -> str:
        return iso(moment)

    @classmethod
    def from_notification(
        cls,
        notification: "Notification",
        *,
        channel: str,
        environment: str | None,
        requested_at: datetime,
    ) -> Self:
        """The row for an approval; its links and resume token stay out of it.

        ``reason`` is the gate's reason and ``requestedAt`` the time the item was
        asked, both as the notification carries them (``Composer.for_item`` sets
        them from the pending item): a retry hours later stores the same row.
        ``requested_at`` stands in only for a notification built without that
        time (a caller's own); a gate that gave no reason leaves it empty — never
        the title, which is a sentence for a person, not the decision's why.
        ``environment`` is the deployment's.

        Raises:
            SendFailed: permanent; the approval names no pending item or no tool.
        """
        if not notification.pending_id or not notification.tool:
            raise SendFailed(channel, "an approval without pendingId or tool", retryable=False)
        return cls(
            pending_id=notification.pending_id,
            tool=notification.tool,
            args=notification.args or {},
            scope=ApprovalScope(
                tenant=notification.tenant, environment=environment, agent=notification.agent
            ),
            reason=notification.reason or "",
            requested_at=(
                datetime.fromisoformat(notification.requested_at)
                if notification.requested_at
                else requested_at
            ),
        )

    def wire(self) -> dict[str, Any]:
        """The camelCase JSON object a reader of the list or table sees."""
        return self.model_dump(mode="json", by_alias=True)


def approval_row(
    notification: "Notification", *, channel: str, environment: str | None, clock: "Clock"
) -> PendingApprovalRow | None:
    """The row to store for ``notification``; ``None`` for any kind but approval.

    ``clock`` dates only a notification that carries no ``requested_at``.

    Raises:
        SendFailed: permanent; the approval names no pending item or no tool.
    """
    if notification.kind != "approval":
        return None
    return PendingApprovalRow.from_notification(
        notification, channel=channel, environment=environment, requested_at=clock.now()
    )


def require_extra(module: str, *, channel: str, extra: str) -> None:
    """Check that ``module`` imports, by importing it.

    Called by ``from_config``, so a missing (or broken: psycopg without libpq) client
    library is said when the channel is built, as a failure of its own rows only,
    not as an ImportError in the middle of a send.

    Raises:
        ModuleNotFoundError: ``module`` cannot be imported; the message names the extra.
    """
    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise ModuleNotFoundError(
            f"the {channel} channel needs {module}, which cannot be imported here "
            f"({type(exc).__name__}: {exc}): install the extra `pip install 'signoff[{extra}]'` "
            "(deployed: add it to the engine layer, layers/signoff/requirements.txt)",
            name=module,
        ) from exc
