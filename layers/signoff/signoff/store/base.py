"""The store's ports: one per kind of thing a durable turn keeps.

Each port is one class over a ``Table`` (``sessions.py``, ``pending.py``,
``outbox.py``, ``api_keys.py``), its rules written once as condition values
(``rules.py``); ``MemoryStore`` and ``DynamoStore`` put the same classes over a
``MemoryTable`` or a ``DynamoTable``, and the contract suites in
``tests/contract/`` run against both.
The session port owns the one atomic write of a turn (``commit``): a step's log
chunk with its checkpoint, a pause with its pending item and outbox rows, a
finish with its lifecycle announcements. The outbox's own ``add`` writes the rows
of notifications no turn commits (the sweeper's ``stuck`` reminders). The outbox
is split by who calls it (``OutboxRows``, ``OutboxWriter``, ``NotifierOutbox``,
``SweeperOutbox``, ``OperatorOutbox``); ``Outbox`` is every one of them. The
sessions and the pending items are split the same way: ``TurnSessions``,
``WatchedSessions``, ``GatedSessions``, ``StalledSessions`` (``Sessions`` is all of
them); ``PendingReader``, ``PendingDecisions``, ``TurnPending``, ``SweptPending``,
``InboxPending``, ``OperatorPending`` (``PendingItems`` is all of them). Each caller
is typed against its own; an adapter class implements them all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from collections.abc import Iterator

    from signoff.store.pending_records import OutboxRow, PendingItem, PendingStatus, Ruling, Vote
    from signoff.store.records import ApiKey, AuditEntry
    from signoff.store.session_records import Commit, LogChunk, SessionRecord

__all__ = [
    "ApiKeys",
    "Audit",
    "Blobs",
    "ClaimFor",
    "GatedSessions",
    "InboxPending",
    "NotifierOutbox",
    "OperatorOutbox",
    "OperatorPending",
    "Outbox",
    "OutboxRedrive",
    "OutboxRows",
    "OutboxWriter",
    "PendingDecisions",
    "PendingItems",
    "PendingReader",
    "ResumedPending",
    "SessionLog",
    "Sessions",
    "Slots",
    "StalledSessions",
    "SweptPending",
    "TurnPending",
    "TurnSessions",
    "WatchedSessions",
]

# Why a lease is taken: a new message (the session must be idle or done), a
# resume (it must be paused on that pending item), or a re-drive of a turn whose
# holder died (it must be running with an expired lease).
ClaimFor = Literal["message", "resume", "redrive"]


# The session ports, by who calls them: ``TableSessions`` implements every one, and
# ``Sessions`` is all of them.


class SessionLog(Protocol):
    """A session and its log, read: where every reader of a session starts."""

    def load(self, session_id: str) -> SessionRecord | None:
        """The session, or None (also when its retention has passed)."""

    def read_log(self, session_id: str, *, from_seq: int = 0) -> Iterator[LogChunk]:
        """The session's log chunks from ``from_seq`` on, in order, paging as it goes."""


class TurnSessions(SessionLog, Protocol):
    """The turn's (``Turns``, its ``Journal``, a run deferred for a slot): the lease,
    and the one atomic write of each step."""

    def claim(
        self,
        fresh: SessionRecord,
        *,
        purpose: ClaimFor,
        owner: str,
        until: float,
        now: float,
        pending_id: str | None = None,
    ) -> SessionRecord:
        """Take the session's lease; ``fresh`` is stored when the session is new.

        Raises:
            SessionBusy: the session is not in the state ``purpose`` needs.
            NotFound: ``purpose`` is resume or redrive and there is no such session.
        """

    def commit(self, commit: Commit, *, owner: str) -> SessionRecord:
        """Write ``commit`` atomically, if ``owner`` still holds the lease; the session
        as stored (what the writer's next commit builds on).

        Raises:
            LeaseLost: another owner holds the lease now (or already wrote this step).
        """


class WatchedSessions(SessionLog, Protocol):
    """The API's watchers of a session: its status, its event stream, a long poll."""

    def read_log_back(self, session_id: str, *, from_seq: int, to_seq: int) -> Iterator[LogChunk]:
        """The chunks from ``to_seq`` down to ``from_seq``, newest first, a few per read."""


class GatedSessions(SessionLog, Protocol):
    """A rules replay's (``signoff.approvals.replay``): the sessions whose calls the
    rules decided, and their logs."""

    def gated(
        self, agent: str, *, since: float, until: float, tenant: str | None = None
    ) -> Iterator[SessionRecord]:
        """Sessions of ``agent`` (of ``tenant`` only, if given) whose log holds a rule
        decision (``actauth:decision``) committed on a UTC day from ``since``'s to
        ``until``'s, each once, by day then tenant and id, read lazily.

        Whole days: the caller keeps the chunks inside its exact window.
        """


class StalledSessions(Protocol):
    """Turns that stopped moving: the sweeper's re-drive reads one shard, operators all."""

    def stalled(self, before: float, *, limit: int = 100) -> list[SessionRecord]:
        """Running sessions whose turn stopped moving by ``before``, longest stalled first.

        A turn stopped moving when its lease ran out (its process died) or, if it
        yielded before its deadline and holds no lease, when it yielded. Only turns
        with a checkpoint are listed: they are the ones ``claim(purpose="redrive")``
        can continue. Every shard: for operators and tests.
        """

    def stalled_in(self, shard: int, before: float) -> Iterator[SessionRecord]:
        """One shard's stalled sessions (as ``stalled``), read lazily: a sweep's
        ``stalled`` task."""


class Sessions(TurnSessions, WatchedSessions, GatedSessions, StalledSessions, Protocol):
    """Every session port at once: what an adapter implements (``TableSessions``), what
    the composition roots hand out, and what ``tests/contract`` checks."""


# The pending items' ports, by who calls them: ``TablePendingItems`` implements every
# one, and ``PendingItems`` is all of them. An item is written the first time by the
# pause commit that creates it (``TurnSessions.commit``).


class PendingReader(Protocol):
    """One item by id: the notifier composing its messages, the API and its pages, a
    rules replay, the sweeper's re-enqueue."""

    def get(self, pending_id: str) -> PendingItem | None:
        """The item, or None (also when its retention has passed)."""


class PendingDecisions(PendingReader, Protocol):
    """The decision path's (``signoff.durable.decide``, ``signoff.durable.votes``): a
    resolution or a vote, each one conditional write with its audit entry."""

    def resolve(self, pending_id: str, ruling: Ruling, *, audit: AuditEntry) -> PendingItem:
        """Move a pending item to ``ruling.status`` with one conditional write, and
        record ``audit``.

        The state change and its audit entry are one atomic write (DESIGN.md §5.8):
        a winner always has its entry, and a refused write leaves neither.
        ``status="expired"`` is the sweeper's move and needs ``expires_at <= now``;
        every other status needs ``expires_at > now``.

        Raises:
            NotFound: no such item.
            AlreadyResolved: it left ``pending`` before; carries the current item.
            Expired: its time ran out (even if no sweep has marked it yet).
            UsageError: ``status="expired"`` before the item is due.
        """

    def vote(
        self,
        item: PendingItem,
        vote: Vote,
        *,
        audit: AuditEntry,
        status: PendingStatus | None = None,
        retain_until: float | None = None,
    ) -> PendingItem | None:
        """Add ``vote`` to ``item`` with ``audit``, in one conditional write that holds
        only while the item waits for a human and still has the votes ``item`` (as
        the voter read it) has; with ``status``, that write also resolves it, by the
        voter. The item as the vote left it; None: somebody voted first.

        Raises:
            NotFound, AlreadyResolved, Expired: as ``resolve``.
        """


class ResumedPending(Protocol):
    """The mark that a resolved item's turn went on: the turn's, and the sweeper's."""

    def mark_resumed(self, pending_id: str) -> None:
        """Record that the turn was resumed after the resolution (its session claimed
        for it: from then on its lease guards it), taking the item off the sweep;
        NotFound if no such item."""


class TurnPending(PendingDecisions, ResumedPending, Protocol):
    """The turn's (``Turns``): it decides through ``Decisions`` and marks the item
    resumed once it holds the session."""


class SweptPending(PendingReader, ResumedPending, Protocol):
    """The sweeper's, its escalation ladder's too: one shard's due items, and the
    counts and sweep keys its conditional writes move."""

    def due_in(self, shard: int, now: float) -> Iterator[PendingItem]:
        """One shard's items with something due by ``now`` — an expiry, an escalation
        step, a reminder, or a resolved item whose turn was not resumed — soonest
        first, read lazily: a sweep's ``due`` task. O(due): never reads what is not."""

    def reindex(self, item: PendingItem) -> None:
        """Move the item's sweep key to what its state (as read) says is next due;
        nothing when the item changed since it was read."""

    def note_reminder(
        self, pending_id: str, count: int, *, now: float, item: PendingItem | None = None
    ) -> PendingItem | None:
        """Record that reminder number ``count + 1`` went out at ``now``; one conditional write.

        The write holds only while the item is pending, not due, and has had exactly
        ``count`` reminders, so of two sweeps that read the same item one wins. It
        moves the item's sweep key to its next due time (``item``: as the caller read
        it, else read here).

        Returns:
            The item as written, or None when the condition did not hold (or no such item).
        """

    def note_escalation(
        self, pending_id: str, step: int, *, now: float, item: PendingItem | None = None
    ) -> PendingItem | None:
        """Record that escalation step ``step + 1`` was taken at ``now``; one conditional write.

        The write holds only while the item is pending, not due, and has taken exactly
        ``step`` steps, so of two sweeps that read the same item one wins. It moves
        the item's sweep key, as ``note_reminder`` does.

        Returns:
            The item as written, or None when the condition did not hold (or no such item).
        """


class InboxPending(PendingReader, Protocol):
    """The inbox's and the HTTP API's: one item, and a tenant's waiting items."""

    def of_tenant(
        self, tenant: str, now: float, *, after: tuple[float, str] | None = None
    ) -> Iterator[PendingItem]:
        """A tenant's items waiting at ``now`` (pending, not due), oldest request first.

        Read from the tenant's own index partition, paged lazily; ``after`` is the
        ``(requested_at, id)`` of the last item a previous page showed.
        """


class OperatorPending(Protocol):
    """Every shard's due items at once: for operators and tests."""

    def due(self, now: float, *, limit: int = 100) -> list[PendingItem]:
        """Pending items whose ``expires_at`` has passed, oldest first (every shard)."""


class PendingItems(TurnPending, SweptPending, InboxPending, OperatorPending, Protocol):
    """Every pending-item port at once: what an adapter implements
    (``TablePendingItems``), what the composition roots hand out, and what
    ``tests/contract`` checks."""


# The outbox's ports, by who calls them. Rows are keyed by subject and channel; a
# method's ``pending_id`` is the subject's text (``OutboxRow.pending_id``, parsed:
# ``OutboxRow.subject``). A turn's own rows ride in its commit (``Sessions.commit``);
# ``TableOutbox`` implements every port, and ``Outbox`` is all of them.


class OutboxRows(Protocol):
    """One subject's rows: what the decision path reads (was this channel sent the
    item? ``signoff.durable.decide.not_sent_to``), and the notifier and operators too."""

    def rows(self, pending_id: str) -> list[OutboxRow]:
        """Every channel's row of one subject (a pending item or lifecycle subject), by channel."""


class OutboxWriter(Protocol):
    """Rows no turn commits: the escalation ladder's steps, the sweeper's reminders
    and stalled runs."""

    def add(self, rows: list[OutboxRow]) -> bool:
        """Write new rows all together, outside a turn's commit.

        Returns:
            False, writing nothing, when one of the rows exists already (the
            same subject and channel): the notification was added before.
        """


class NotifierOutbox(OutboxRows, Protocol):
    """The notifier's: a subject's rows, each sent under its send lock and recorded."""

    def claim(
        self, pending_id: str, channel: str, *, owner: str, until: float, now: float
    ) -> OutboxRow | None:
        """Take the row's send lock (a conditional lease) and count the attempt.

        None when the row was sent, failed for good, or another owner's lock is live.

        Raises:
            NotFound: no such row.
        """

    def mark_sent(
        self, pending_id: str, channel: str, *, at: float, receipt: dict[str, str] | None = None
    ) -> None:
        """Record ``notified_at`` (and the channel's receipt); only after the send succeeded."""

    def record_receipt(
        self, pending_id: str, channel: str, receipt: dict[str, str], *, owner: str
    ) -> bool:
        """Keep what a send left behind (Slack's channel and ``ts``), in its own write.

        Written right after the service accepted the send and before ``mark_sent``,
        under ``owner``'s send lock, so a retry after a lost ``mark_sent`` is handed
        the receipt and sends nothing. False, writing nothing, when the row is no
        longer ``owner``'s to write (another sender took it over) or is gone.
        """

    def mark_failed(
        self, pending_id: str, channel: str, *, reason: str, retry_at: float | None = None
    ) -> None:
        """Record a permanent failure with its reason and drop the lock; counts ``failures``.

        With ``retry_at`` the row waits for the sweeper's slow retry
        (``retries_due``); without, it is failed for good (``failed``) until an
        operator re-drives it. Either way no claim takes it meanwhile.

        Raises:
            NotFound: no such row.
        """

    def release(
        self,
        pending_id: str,
        channel: str,
        *,
        owner: str,
        error: str,
        receipt: dict[str, str] | None = None,
    ) -> None:
        """Drop ``owner``'s lock after a transient failure, noting the error; a retry follows.

        ``receipt`` records what part of the send went out (e.g. the recipients
        mailed before the failure); the retry is handed it and sends only the rest.
        """


class OutboxRedrive(Protocol):
    """Making a failed row sendable again: the sweeper's slow retry and an operator's."""

    def redrive(self, pending_id: str, channel: str, *, now: float, due_only: bool) -> bool:
        """Make a failed row sendable again with one conditional write (only a failed row).

        ``due_only``: the sweeper's retry, only once ``retry_at`` has come, keeping
        the failure count; otherwise an operator's re-drive of any failed row, its
        schedule started afresh. The row rejoins ``unsent`` (after the grace period
        from ``now``); its idempotency key is unchanged.

        Returns:
            False, writing nothing, when the row is not failed (sent, re-driven
            already, unknown) or, with ``due_only``, its retry is not due.
        """


class SweeperOutbox(OutboxWriter, OutboxRedrive, Protocol):
    """The sweep's: its ``send`` and ``retry`` tasks read one shard each, its
    reminders and stalled runs add rows (``OutboxWriter``)."""

    def unsent_in(self, shard: int, created_before: float) -> Iterator[OutboxRow]:
        """One shard's unsent rows, oldest first, read lazily: a sweep's ``send`` task."""

    def retries_due_in(self, shard: int, now: float) -> Iterator[OutboxRow]:
        """One shard's rows whose retry is due, read lazily: a sweep's ``retry`` task."""


class OperatorOutbox(OutboxRows, OutboxRedrive, Protocol):
    """``signoff outbox list | retry``: every shard's listings, and the operator's re-drive."""

    def unsent(self, *, created_before: float, limit: int = 100) -> list[OutboxRow]:
        """Rows never sent (and not failed), oldest first (every shard)."""

    def retries_due(self, now: float, *, limit: int = 100) -> list[OutboxRow]:
        """Failed rows whose ``retry_at`` has come by ``now``, soonest first (every shard)."""

    def failed(self, *, limit: int = 100) -> list[OutboxRow]:
        """Rows failed for good (no retry scheduled), oldest failure first."""


class Outbox(NotifierOutbox, SweeperOutbox, OperatorOutbox, Protocol):
    """Every outbox port at once: what an adapter implements (``TableOutbox``), what
    the composition roots hand out, and what ``tests/contract`` checks."""


class Audit(Protocol):
    def record(self, entries: list[AuditEntry]) -> None: ...

    def for_subject(self, subject: str, *, rules: bool = True) -> list[AuditEntry]:
        """Every entry about one session, oldest first; ``rules=False``: without the
        gate's rule decisions (which need not be read then)."""

    def of_tenant(
        self,
        tenant: str,
        *,
        since: float,
        until: float,
        before: tuple[float, str] | None = None,
    ) -> Iterator[AuditEntry]:
        """A tenant's entries with ``since <= at < until``, newest first, paged lazily.

        Only entries that name their tenant, and no rule decisions (people, expiry,
        refusals). ``before`` is the ``(at, id)`` of the last entry a previous page
        showed: only older entries follow.
        """


class Blobs(Protocol):
    """Where values too large for one store item go."""

    def put(self, key: str, data: bytes) -> None: ...

    def get(self, key: str) -> bytes: ...


class Slots(Protocol):
    """Leases per scope: at most ``size`` holders at once (``signoff.durable.slots``)."""

    def take(self, scope: str, size: int, *, holder: str, until: float, now: float) -> str | None:
        """Take a free slot for ``holder`` until ``until``; None when the slots it read are held.

        Never more than ``size`` holders; near ``size``, None may come while a
        slot is still free elsewhere (the caller polls again).
        """

    def give_back(self, scope: str, slot: str, *, holder: str) -> None:
        """Free ``slot`` if ``holder`` still holds it (a slot taken over stays taken)."""

    def held(self, scope: str, size: int, *, now: float) -> int:
        """How many of ``scope``'s ``size`` slots are held by live leases at ``now``."""


class ApiKeys(Protocol):
    """API keys mapped to tenants, kept as hashes of the keys (``signoff.keys.api_keys``)."""

    def add(self, key: ApiKey) -> None:
        """Store a new key.

        Raises:
            UsageError: a key with that id or that hash is stored already.
        """

    def find(self, key_hash: str) -> ApiKey | None:
        """The key with that hash, revoked ones included (the caller reads ``revoked_at``)."""

    def revoke(self, key_id: str, *, at: float) -> ApiKey:
        """Mark the key revoked at ``at``; a key revoked before keeps its first time.

        Raises:
            NotFound: no key with that id.
        """

    # last in the class: below it, ``list`` in an annotation would name this method
    def list(self, tenant: str | None = None) -> list[ApiKey]:
        """Every key (or one tenant's), by tenant then key id."""
