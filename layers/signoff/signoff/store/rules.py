"""The state rules every store adapter applies alike (DESIGN.md §5).

Each rule is written once, as named parts with a one-line comment; the
in-memory adapter evaluates it in Python under its lock, and the DynamoDB
adapter states the same parts as condition expressions and uses these
functions to explain a refusal from the item the failed write returned.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from signoff.errors import AlreadyResolved, Expired, NotFound, SessionBusy, SignoffError, UsageError
from signoff.store.codec import MAX_RESOLUTION_TEXT, lease_index, ttl_at

if TYPE_CHECKING:
    from signoff.store.base import ClaimFor
    from signoff.store.codec import Item
    from signoff.store.records import (
        ApiKey,
        Commit,
        OutboxRow,
        PendingItem,
        PendingStatus,
        SessionRecord,
    )

__all__ = [
    "api_key_taken",
    "as_seen",
    "claim_attrs",
    "claim_refusal",
    "claimable",
    "committed_session",
    "may_remind",
    "reminder_attrs",
    "resolution_attrs",
    "resolution_refusal",
    "revoked",
    "sendable",
    "stalled",
]


def claimable(
    current: SessionRecord | None,
    purpose: ClaimFor,
    owner: str,
    now: float,
    pending_id: str | None = None,
) -> bool:
    """Whether ``owner`` may take the session's lease for ``purpose`` (DESIGN.md §5)."""
    if current is None:
        # only a message starts a session; resume and redrive need one to exist
        return purpose == "message"
    # nobody else holds a live lease: none at all, run out, or already ours
    lease_free = (
        current.lease_owner is None
        or (current.lease_until is not None and current.lease_until <= now)
        or current.lease_owner == owner
    )
    # a message runs only between turns
    between_turns = current.status in ("idle", "done")
    # a resume continues exactly the pause it resolves
    waits_on_it = current.status == "paused" and pending_id is not None
    waits_on_it = waits_on_it and current.pending_id == pending_id
    # a redrive picks up a turn whose holder stopped renewing its lease
    running = current.status == "running"
    wanted = {"message": between_turns, "resume": waits_on_it, "redrive": running}
    return wanted[purpose] and lease_free


def claim_refusal(session_id: str, current: SessionRecord | None) -> SignoffError:
    """The error for a claim ``claimable`` refused."""
    if current is None:
        return NotFound("session", session_id)
    return SessionBusy(session_id, status=current.status, pending_id=current.pending_id)


def claim_attrs(
    *, session_id: str, purpose: ClaimFor, owner: str, until: float, now: float
) -> Item:
    """The live attributes a successful claim sets, with the session's place in the lease index.

    A resume or a re-drive continues a checkpoint, so the session joins the
    lease index at once. A message's turn has no checkpoint until its first
    commit, which indexes it; nothing of a message that died before that was
    recorded, so there is nothing for the sweeper to continue.
    """
    attrs: Item = {"status": "running", "lease_owner": owner, "lease_until": until}
    attrs["updated_at"] = now
    if purpose == "message":
        return attrs
    return attrs | lease_index(session_id, until)


def committed_session(commit: Commit, owner: str) -> SessionRecord:
    """The session as a commit stores it: the lease kept by ``owner`` or given up."""
    if commit.release:
        return commit.session.model_copy(update={"lease_owner": None, "lease_until": None})
    return commit.session.model_copy(update={"lease_owner": owner})


def resolution_refusal(
    pending_id: str, current: PendingItem | None, status: PendingStatus, now: float
) -> SignoffError | None:
    """Why ``current`` cannot move to ``status`` at ``now``, or None when it can."""
    if current is None:
        return NotFound("pending item", pending_id)
    if current.status == "expired" and status != "expired":
        # swept or not, a human who came too late hears the same thing
        return Expired(current)
    if current.status != "pending":
        # the first resolution won; later ones see it
        return AlreadyResolved(current)
    due = current.expires_at <= now
    if status == "expired":
        return None if due else UsageError(f"pending item {pending_id} is not due yet")
    return Expired(as_seen(current, now)) if due else None


def as_seen(item: PendingItem, now: float) -> PendingItem:
    """``item`` with the status a person is told at ``now``: past its time it is expired,
    whether or not a sweep has marked it yet."""
    if item.status == "pending" and item.expires_at <= now:
        return item.model_copy(update={"status": "expired"})
    return item


def resolution_attrs(
    *,
    status: PendingStatus,
    actor: str,
    channel: str,
    now: float,
    answer: str | None,
    note: str | None,
    retain_until: float | None,
) -> Item:
    """The live attributes (and ttl) a successful resolution sets.

    Raises:
        UsageError: ``answer`` and ``note`` together exceed ``MAX_RESOLUTION_TEXT`` bytes.
    """
    text = len((answer or "").encode()) + len((note or "").encode())
    if text > MAX_RESOLUTION_TEXT:
        raise UsageError(f"answer and note are {text} bytes; at most {MAX_RESOLUTION_TEXT}")
    attrs: Item = {"status": status, "resolved_by": actor, "resolved_via": channel}
    attrs["resolved_at"] = now
    optional = {"answer": answer, "note": note, "retain_until": retain_until}
    attrs.update({name: value for name, value in optional.items() if value is not None})
    ttl = ttl_at(retain_until)
    if ttl is not None:
        attrs["ttl"] = ttl
    return attrs


def api_key_taken(key: ApiKey) -> SignoffError:
    """The error for adding a key whose id or hash is stored already."""
    return UsageError(f"API key {key.key_id} (or one with the same secret) exists already")


def revoked(current: ApiKey, at: float) -> ApiKey:
    """The key after a revocation at ``at``; a key revoked before keeps its first time."""
    if current.revoked_at is not None:
        return current
    return current.model_copy(update={"revoked_at": at})


def sendable(row: OutboxRow, *, owner: str, now: float) -> bool:
    """Whether ``owner`` may take the send lock of ``row`` now."""
    # not sent yet: notified_at is set only after a channel accepted the send
    unsent = row.notified_at is None
    # not given up on: a permanent failure is recorded, not retried
    alive = not row.failed
    # nobody else is sending it now: no lock, an expired one, or our own
    free = row.lock_owner is None or (row.lock_until or 0) <= now or row.lock_owner == owner
    return unsent and alive and free


def stalled(record: SessionRecord, before: float) -> bool:
    """Whether a session's turn stopped moving by ``before`` and may be re-driven."""
    # a turn is under way: paused, idle and done sessions wait for nobody's process
    running = record.status == "running"
    # it has a checkpoint to continue from
    checkpointed = record.state is not None
    # its lease ran out by then (a turn that yielded holds none: it stalled when it yielded)
    since = record.lease_until if record.lease_until is not None else record.updated_at
    return running and checkpointed and since <= before


def may_remind(current: PendingItem, count: int, now: float) -> bool:
    """Whether reminder number ``count + 1`` of ``current`` may be recorded now."""
    # still waiting for a human: a resolved item needs no reminder
    waiting = current.status == "pending"
    # not due: an item past expires_at is the expiry's to handle
    in_time = current.expires_at > now
    # nobody recorded this reminder before: two sweeps never send the same one
    unseen = current.reminders == count
    return waiting and in_time and unseen


def reminder_attrs(count: int, now: float) -> Item:
    """The live attributes recording reminder number ``count + 1`` at ``now``."""
    return {"reminders": count + 1, "reminded_at": now}
