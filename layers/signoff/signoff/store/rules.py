"""The state rules of the store (DESIGN.md §5), each written once as a condition value.

Every table applies the same value: ``DynamoTable`` renders it to a
ConditionExpression, ``MemoryTable`` evaluates it under its lock, and the port
classes use it again to filter what an eventually consistent index returned.
When a write is refused, the ``*_refusal`` functions explain it from the item
the refused call returned.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from signoff.errors import AlreadyResolved, Expired, NotFound, SessionBusy, SignoffError, UsageError
from signoff.store.codec import MAX_RESOLUTION_TEXT, ttl_at, votes_json
from signoff.store.keys import LEASE_INDEX, SWEEP_INDEX
from signoff.store.table import Attr

if TYPE_CHECKING:
    from collections.abc import Sequence

    from signoff.store.base import ClaimFor
    from signoff.store.pending_records import PendingItem, PendingStatus, Ruling, Vote
    from signoff.store.records import ApiKey
    from signoff.store.session_records import Commit, SessionRecord
    from signoff.store.table import Condition, Item

__all__ = [
    "FREE_KEY",
    "PENDING",
    "UNREVOKED_KEY",
    "absent",
    "api_key_taken",
    "claim_attrs",
    "claim_refusal",
    "claimable",
    "committed_session",
    "due",
    "escalatable",
    "escalation_attrs",
    "live",
    "owned",
    "redrivable",
    "releasable",
    "remindable",
    "reminder_attrs",
    "resolution_attrs",
    "resolution_refusal",
    "resolvable",
    "retry_due",
    "revoked",
    "sendable",
    "stalled",
    "unsent",
    "votable",
    "vote_attrs",
    "waiting",
]

PK, TTL, STATUS = Attr("pk"), Attr("ttl"), Attr("status")
LEASE_OWNER, LEASE_UNTIL = Attr("lease_owner"), Attr("lease_until")
EXPIRES_AT, REMINDERS = Attr("expires_at"), Attr("reminders")
VOTE_COUNT = Attr("vote_count")
ESCALATION_STEP = Attr("escalation_step")
LOCK_OWNER, LOCK_UNTIL = Attr("lock_owner"), Attr("lock_until")


# --- every item ----------------------------------------------------------------------------


def live(now: float) -> Condition:
    """The item exists for readers: written, and its retention has not passed."""
    # DynamoDB deletes items past their ttl lazily, so readers and writers check it
    return PK.exists() & (TTL.missing() | TTL.gt(now))


def absent(now: float) -> Condition:
    """The item is new: never written, or its retention passed."""
    return PK.missing() | TTL.le(now)


# --- sessions: the lease -------------------------------------------------------------------


def claimable(
    purpose: ClaimFor, owner: str, now: float, pending_id: str | None = None
) -> Condition:
    """``owner`` may take the session's lease for ``purpose`` (DESIGN.md §5)."""
    # nobody else holds a live lease: none at all, run out, or already ours
    lease_free = LEASE_OWNER.missing() | LEASE_UNTIL.le(now) | LEASE_OWNER.eq(owner)
    wanted = {
        # a message runs only between turns, or after a message whose process died
        # before its first commit (running, never indexed: no checkpoint). Nothing of
        # that turn was recorded, so once its lease ran out the session is free again.
        "message": STATUS.one_of("idle", "done")
        | (
            STATUS.eq("running")
            & Attr(SWEEP_INDEX.pk).missing()
            & Attr(LEASE_INDEX.pk).missing()  # the previous release's lease index
        ),
        # a resume continues exactly the pause it resolves
        "resume": STATUS.eq("paused") & Attr("pending_id").eq(pending_id),
        # a redrive picks up a turn whose holder stopped renewing its lease
        "redrive": STATUS.eq("running"),
    }
    return live(now) & wanted[purpose] & lease_free


def owned(owner: str) -> Condition:
    """The lease is still ``owner``'s (nobody took it over after it ran out)."""
    return LEASE_OWNER.eq(owner)


def stalled(before: float) -> Condition:
    """A session's turn stopped moving by ``before`` and may be re-driven."""
    # a turn is under way: paused, idle and done sessions wait for nobody's process
    running = STATUS.eq("running")
    # its lease ran out by then (a turn that yielded holds none: it stalled when it yielded)
    since = LEASE_UNTIL.le(before) | (LEASE_UNTIL.missing() & Attr("updated_at").le(before))
    return running & since


def claim_refusal(session_id: str, current: SessionRecord | None) -> SignoffError:
    """The error for a claim ``claimable`` refused."""
    if current is None:
        return NotFound("session", session_id)
    return SessionBusy(session_id, status=current.status, pending_id=current.pending_id)


def claim_attrs(*, owner: str, until: float, now: float) -> Item:
    """The live attributes a successful claim sets.

    ``lease_key_at`` is the lease's first expiry: the session's sweep key from its
    first commit with a checkpoint (a resume's or a re-drive's claim has one, so
    the store indexes it at once), which commits that extend the lease keep.
    """
    return {
        "status": "running",
        "lease_owner": owner,
        "lease_until": until,
        "lease_key_at": until,
        "updated_at": now,
    }


def committed_session(commit: Commit, owner: str) -> SessionRecord:
    """The session as a commit stores it: the lease kept by ``owner`` or given up."""
    if commit.release:
        return commit.session.model_copy(update={"lease_owner": None, "lease_until": None})
    return commit.session.model_copy(update={"lease_owner": owner})


# --- pending items -------------------------------------------------------------------------

# nobody resolved it before: the first resolution wins
PENDING: Final = STATUS.eq("pending")


def due(now: float) -> Condition:
    """The item's time has run out: only the sweeper's expiry may move it now."""
    return PENDING & EXPIRES_AT.le(now)


def waiting(now: float) -> Condition:
    """The item waits for a human: a human decides only before its time runs out."""
    return PENDING & EXPIRES_AT.gt(now)


def resolvable(status: PendingStatus, now: float) -> Condition:
    """The item may move to ``status`` at ``now``: the expiry once due, a human in time."""
    return live(now) & (due(now) if status == "expired" else waiting(now))


def votable(seen: int, now: float) -> Condition:
    """A vote may be added: the item waits for a human, and nobody voted since its
    voter read ``seen`` votes (so each vote is counted once, and exactly one vote
    reaches the quorum)."""
    # an item with no votes has no count
    unseen = VOTE_COUNT.eq(seen) if seen else VOTE_COUNT.missing() | VOTE_COUNT.eq(0)
    return resolvable("approved", now) & unseen


def vote_attrs(votes: Sequence[Vote]) -> Item:
    """The live attributes holding ``votes`` (the item's votes, the new one last).

    Raises:
        UsageError: their notes together exceed ``MAX_RESOLUTION_TEXT`` bytes.
    """
    text = votes_json(votes)
    if len(text.encode()) > MAX_RESOLUTION_TEXT:
        raise UsageError(f"the votes' notes exceed {MAX_RESOLUTION_TEXT} bytes together")
    return {"votes": text, "vote_count": len(votes)}


def remindable(count: int, now: float) -> Condition:
    """Reminder number ``count + 1`` may be recorded: the item still waits, and
    nobody recorded this reminder before (two sweeps never send the same one)."""
    return live(now) & waiting(now) & REMINDERS.eq(count)


def escalatable(step: int, now: float) -> Condition:
    """Escalation step ``step + 1`` may be recorded: the item still waits, and has
    taken exactly ``step`` steps (two sweeps never take the same step)."""
    return live(now) & waiting(now) & ESCALATION_STEP.eq(step)


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
    late = current.expires_at <= now
    if status == "expired":
        return None if late else UsageError(f"pending item {pending_id} is not due yet")
    # past its time it is expired, whether or not a sweep has marked it yet
    return Expired(current.model_copy(update={"status": "expired"})) if late else None


def resolution_attrs(ruling: Ruling) -> Item:
    """The live attributes (and ttl) a successful resolution sets.

    Raises:
        UsageError: ``answer``, ``note`` and the edited arguments together exceed
            ``MAX_RESOLUTION_TEXT`` bytes.
    """
    texts = (ruling.answer, ruling.note, ruling.edited_args_json)
    text = sum(len((part or "").encode()) for part in texts)
    if text > MAX_RESOLUTION_TEXT:
        raise UsageError(
            f"answer, note and changes are {text} bytes; at most {MAX_RESOLUTION_TEXT}"
        )
    attrs: Item = {
        "status": ruling.status,
        "resolved_by": ruling.actor,
        "resolved_via": ruling.channel,
        "resolved_at": ruling.now,
    }
    optional = {
        "answer": ruling.answer,
        "note": ruling.note,
        "edited_args_json": ruling.edited_args_json,
        "retain_until": ruling.retain_until,
    }
    attrs.update({name: value for name, value in optional.items() if value is not None})
    ttl = ttl_at(ruling.retain_until)
    if ttl is not None:
        attrs["ttl"] = ttl
    return attrs


def reminder_attrs(count: int, now: float) -> Item:
    """The live attributes recording reminder number ``count + 1`` at ``now``."""
    return {"reminders": count + 1, "reminded_at": now}


def escalation_attrs(step: int, now: float) -> Item:
    """The live attributes recording escalation step ``step + 1`` taken at ``now``."""
    return {"escalation_step": step + 1, "escalated_at": now}


# --- outbox rows ---------------------------------------------------------------------------


def unsent(created_before: float) -> Condition:
    """Never sent, and created before ``created_before``."""
    # notified_at is set only after a channel accepted the send
    return Attr("notified_at").missing() & Attr("created_at").lt(created_before)


def sendable(owner: str, now: float) -> Condition:
    """``owner`` may take the row's send lock now."""
    # not sent yet: notified_at is set only after a channel accepted the send
    not_sent = Attr("notified_at").missing()
    # not given up on: a permanent failure is recorded, not retried
    alive = Attr("failed").missing() | Attr("failed").eq(False)
    # nobody else is sending it now: no lock, an expired one, or our own
    free = LOCK_OWNER.missing() | LOCK_UNTIL.le(now) | LOCK_OWNER.eq(owner)
    return live(now) & not_sent & alive & free


def retry_due(now: float) -> Condition:
    """A permanent failure whose slow retry is due at ``now`` (failed, never sent)."""
    return Attr("failed").eq(True) & Attr("notified_at").missing() & Attr("retry_at").le(now)


def redrivable(now: float, *, due_only: bool) -> Condition:
    """The row may be made sendable again: it failed, and was never sent.

    ``due_only``: the sweeper's move, only once its ``retry_at`` has come (two
    sweeps reset it once); an operator's re-drive takes any failed row.
    """
    failed = Attr("failed").eq(True) & Attr("notified_at").missing()
    return live(now) & (retry_due(now) if due_only else failed)


def releasable(owner: str, now: float) -> Condition:
    """``owner`` holds the row's lock: only the holder drops it (a lapsed one may be another's)."""
    return live(now) & LOCK_OWNER.eq(owner)


# --- API keys ------------------------------------------------------------------------------

# a new key takes a hash and an id nobody holds (a second add of the same key fails)
FREE_KEY: Final = PK.missing()
# a revocation rewrites copies that exist, so it never recreates a half-written key,
# and the first revocation wins: a later one must not move its time
UNREVOKED_KEY: Final = PK.exists() & Attr("revoked_at").missing()


def api_key_taken(key: ApiKey) -> SignoffError:
    """The error for adding a key whose id or hash is stored already."""
    return UsageError(f"API key {key.key_id} (or one with the same secret) exists already")


def revoked(current: ApiKey, at: float) -> ApiKey:
    """The key after a revocation at ``at``; a key revoked before keeps its first time."""
    if current.revoked_at is not None:
        return current
    return current.model_copy(update={"revoked_at": at})
