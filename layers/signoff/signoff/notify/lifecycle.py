"""Notifications that are not a decision: run announcements and ``stuck`` reminders.

An agent's ``notify`` names, per channel, the events it wants. ``approval`` and
``question`` rows belong to a pending item and are composed from it when sent;
everything here is composed when it is committed and stored whole in its outbox
rows, because nothing else would be left to compose it from (and it has no links
to decide with, so no resume token ages inside it).

Each logical notification has a *subject* (``signoff.channels.subject.Subject``),
the outbox key that makes it happen once per channel however often it is written
or retried:

==========================================  ================  =====================
subject                                     notification      when
==========================================  ================  =====================
``Subject.run_start(run)``                  ``info``          a message starts a run
``Subject.run_start(run, pending)``         ``info``          a resolution resumes it
``Subject.run_finish(run)``                 ``result``        done, max_turns, denied
``Subject.stuck(pending, n)``               ``stuck``         the n-th reminder
``Subject.stalled(session, run)``           ``stuck``         the run's lease ran out
``Subject.escalate(pending, n)``            the item's kind   escalation step n
``Subject.votes(pending, n)``               (none)            the n-th vote, short of
                                                              the quorum
==========================================  ================  =====================

A vote's subject has no rows at all: it asks the notifier to redraw the messages
already sent about the item (Slack, Lark) with the new tally, buttons kept.

An escalation step's rows are the exception here: they carry no notification but
are composed from their pending item when sent (``Subject.composed_from``), like
the item's own rows, so the channels a step asks get the decision card with its
links and buttons.

The idempotency key of a send is ``<runId>:<subject>:<channel>``; the
notification's channel-independent key (a webhook's ``Idempotency-Key``)
is derived from it by ``signoff.channels.notification.notification_key``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from signoff.channels.notification import Notification
from signoff.channels.subject import Subject
from signoff.clock import iso
from signoff.run_channels import Trigger
from signoff.store.pending_records import OutboxRow

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from signoff.store.pending_records import PendingItem
    from signoff.store.session_records import SessionRecord

__all__ = [
    "Trigger",
    "escalation_rows",
    "rows",
    "run_finished",
    "run_started",
    "stalled",
    "still_waiting",
    "subscribers",
]


def subscribers(notify: Mapping[str, Sequence[str]], event: str) -> list[str]:
    """The channels of an agent's ``notify`` that want ``event``, by name."""
    return sorted(channel for channel, wanted in notify.items() if event in wanted)


def escalation_rows(
    item: PendingItem, number: int, channels: Sequence[str], *, now: float, retain_until: float
) -> list[OutboxRow]:
    """Step ``number``'s rows: one per channel it asks, each composed from ``item`` when sent.

    Their idempotency key (``<runId>:escalate:<pendingId>:<n>:<channel>``) is their own,
    so a channel asked again at a later step gets that step's message too.
    """
    return [
        OutboxRow(
            pending_id=str(Subject.escalate(item.id, number)),
            channel=channel,
            run_id=item.run_id,
            kind=item.kind,
            created_at=now,
            retain_until=retain_until,
        )
        for channel in channels
    ]


def rows(
    subject: Subject,
    notification: Notification,
    channels: Sequence[str],
    *,
    now: float,
    retain_until: float,
) -> list[OutboxRow]:
    """One outbox row per channel, each carrying the whole notification."""
    wire = notification.wire()
    return [
        OutboxRow(
            pending_id=str(subject),
            channel=channel,
            run_id=notification.run_id,
            kind=notification.kind,
            created_at=now,
            notification=wire,
            retain_until=retain_until,
        )
        for channel in channels
    ]


def run_started(
    *,
    agent: str,
    session: SessionRecord,
    run_id: str,
    trigger: Trigger,
    pending_id: str | None = None,
) -> Notification:
    """The ``run_start`` announcement: an ``info`` naming what started the run."""
    cause = "a new message" if trigger == "message" else f"the resolution of {pending_id}"
    return Notification(
        kind="info",
        agent=agent,
        run_id=run_id,
        title=f"{agent} started ({trigger})",
        body=f"{agent} started a run on session {session.session_id}, after {cause}.",
        session_id=session.session_id,
        tenant=session.tenant,
        pending_id=pending_id,
        trigger=trigger,
    )


def run_finished(
    *,
    agent: str,
    session: SessionRecord,
    run_id: str,
    text: str,
    stop_reason: str | None,
) -> Notification:
    """The ``run_finish`` announcement: a ``result`` carrying the final text."""
    ending = "finished" if stop_reason is None else f"stopped ({stop_reason})"
    body = text if stop_reason is None else f"{text}\n\nStop reason: {stop_reason}"
    return Notification(
        kind="result",
        agent=agent,
        run_id=run_id,
        title=f"{agent} {ending}",
        body=body,
        session_id=session.session_id,
        tenant=session.tenant,
        stop_reason=stop_reason,
    )


def still_waiting(item: PendingItem, number: int, now: float) -> Notification:
    """The ``number``-th ``stuck`` reminder about an item nobody has decided yet."""
    what = f"{item.tool}" if item.kind == "approval" else f"the question {item.question!r}"
    expires = iso(datetime.fromtimestamp(item.expires_at, tz=UTC))
    return Notification(
        kind="stuck",
        agent=item.agent,
        run_id=item.run_id,
        title=f"Still waiting: {what} ({item.agent})",
        body=(
            f"{item.agent} has waited {_span(now - item.requested_at)} for a decision on "
            f"{what} (reminder {number}). It expires at {expires}."
        ),
        expires_at=expires,
        pending_id=item.id,
        session_id=item.session_id,
        tenant=item.tenant,
        tool=item.tool,
        args=item.args,
        question=item.question,
        options=item.options,
    )


def stalled(session: SessionRecord, run_id: str, since: float, now: float) -> Notification:
    """The ``stuck`` notice of a run whose process died (its lease ran out)."""
    return Notification(
        kind="stuck",
        agent=session.agent,
        run_id=run_id,
        title=f"{session.agent} stalled; re-driving",
        body=(
            f"The run on session {session.session_id} stopped making progress "
            f"{_span(now - since)} ago (its process stopped renewing its lease). "
            "The sweeper is continuing it from its last checkpoint."
        ),
        session_id=session.session_id,
        tenant=session.tenant,
    )


def _span(seconds: float) -> str:
    """A duration for people: ``2d 3h``, ``5h 10m``, ``12m``, ``40s``."""
    total = max(int(seconds), 0)
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    if minutes:
        return f"{minutes}m"
    return f"{secs}s"
