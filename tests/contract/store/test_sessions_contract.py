"""Contract of the Sessions port: the lease, the atomic commit, the paged log, large values."""

from __future__ import annotations

import random
import string
from typing import TYPE_CHECKING

import boto3
import pytest
from botocore.stub import Stubber

from signoff.engine.state import CallState, TurnState
from signoff.errors import LeaseLost, NotFound, SessionBusy, StoreUnavailable
from signoff.messages import ToolCall, ToolResultMessage
from signoff.store import base
from signoff.store.dynamodb import DynamoStore
from signoff.store.memory import MemoryBlobs
from signoff.store.s3 import S3Blobs
from signoff.store.session_records import Commit
from tests.support.ports import mismatches

if TYPE_CHECKING:
    from signoff.clock import ManualClock
    from signoff.store.base import ClaimFor
    from signoff.store.session_records import SessionRecord
    from tests.contract.conftest import Records, Store
    from tests.support.aws import AwsResources

OWNER = "lambda-a"
OTHER = "lambda-b"
LEASE = 60.0
ONE_MB = 1024 * 1024


def claim(
    store: Store,
    records: Records,
    now: float,
    *,
    purpose: ClaimFor = "message",
    owner: str = OWNER,
    pending_id: str | None = None,
) -> SessionRecord:
    return store.sessions.claim(
        records.session(),
        purpose=purpose,
        owner=owner,
        until=now + LEASE,
        now=now,
        pending_id=pending_id,
    )


def finish(store: Store, records: Records, *, owner: str = OWNER, **changes: object) -> None:
    """Commit the end of a turn (lease given up) with ``changes`` to the session."""
    session = records.session(**changes)
    store.sessions.commit(Commit(session=session, release=True), owner=owner)


# --- claim ---------------------------------------------------------------------------------


def test_load_of_an_unknown_session_is_none(store: Store) -> None:
    assert store.sessions.load("nobody") is None


def test_a_message_creates_the_session_running_under_the_lease(
    store: Store, records: Records, t0: float
) -> None:
    claimed = claim(store, records, t0)

    assert claimed.status == "running"
    assert (claimed.lease_owner, claimed.lease_until, claimed.updated_at) == (OWNER, t0 + 60, t0)
    assert (claimed.agent, claimed.tenant) == ("refunds", "acme")
    assert store.sessions.load("s1") == claimed


def test_a_message_to_a_running_session_is_refused_with_its_status(
    store: Store, records: Records, t0: float
) -> None:
    claim(store, records, t0)

    with pytest.raises(SessionBusy) as refused:
        claim(store, records, t0 + 1, owner=OTHER)

    assert (refused.value.session_id, refused.value.status) == ("s1", "running")
    assert refused.value.pending_id is None
    loaded = store.sessions.load("s1")
    assert loaded is not None and loaded.lease_owner == OWNER


@pytest.mark.parametrize("between", ["idle", "done"])
def test_a_message_takes_a_session_between_turns_and_keeps_its_history(
    store: Store, records: Records, t0: float, between: str
) -> None:
    claim(store, records, t0)
    finish(store, records, status=between, next_seq=3, message_count=2)

    claimed = claim(store, records, t0 + 1, owner=OTHER)

    assert (claimed.status, claimed.lease_owner) == ("running", OTHER)
    # the stored session is continued, not replaced by the fresh record
    assert (claimed.next_seq, claimed.message_count) == (3, 2)


def test_a_resume_takes_the_session_paused_on_that_item(
    store: Store, records: Records, t0: float
) -> None:
    claim(store, records, t0)
    finish(store, records, status="paused", pending_id="p1")

    claimed = claim(store, records, t0 + 1, purpose="resume", owner=OTHER, pending_id="p1")

    assert (claimed.status, claimed.lease_owner, claimed.pending_id) == ("running", OTHER, "p1")


def test_a_resume_for_another_pending_item_is_refused(
    store: Store, records: Records, t0: float
) -> None:
    claim(store, records, t0)
    finish(store, records, status="paused", pending_id="p1")

    with pytest.raises(SessionBusy) as refused:
        claim(store, records, t0 + 1, purpose="resume", owner=OTHER, pending_id="p2")

    assert (refused.value.status, refused.value.pending_id) == ("paused", "p1")


@pytest.mark.parametrize("purpose", ["resume", "message"])
def test_a_paused_session_takes_no_message_and_an_idle_one_no_resume(
    store: Store, records: Records, t0: float, purpose: ClaimFor
) -> None:
    claim(store, records, t0)
    status = "idle" if purpose == "resume" else "paused"
    finish(store, records, status=status, pending_id="p1" if status == "paused" else None)

    with pytest.raises(SessionBusy) as refused:
        claim(store, records, t0 + 1, purpose=purpose, owner=OTHER, pending_id="p1")

    assert refused.value.status == status


@pytest.mark.parametrize("purpose", ["resume", "redrive"])
def test_resume_and_redrive_need_an_existing_session(
    store: Store, records: Records, t0: float, purpose: ClaimFor
) -> None:
    with pytest.raises(NotFound) as missing:
        claim(store, records, t0, purpose=purpose, pending_id="p1")

    assert (missing.value.kind, missing.value.key) == ("session", "s1")
    assert store.sessions.load("s1") is None


def test_a_redrive_waits_until_the_lease_has_run_out_then_takes_it_over(
    store: Store, records: Records, t0: float
) -> None:
    claim(store, records, t0)

    with pytest.raises(SessionBusy) as refused:
        claim(store, records, t0 + LEASE - 1, purpose="redrive", owner=OTHER)
    taken = claim(store, records, t0 + LEASE, purpose="redrive", owner=OTHER)

    assert refused.value.status == "running"
    assert (taken.status, taken.lease_owner, taken.lease_until) == (
        "running",
        OTHER,
        t0 + 2 * LEASE,
    )


def test_the_holder_may_redrive_its_own_live_lease(
    store: Store, records: Records, t0: float
) -> None:
    claim(store, records, t0)

    renewed = claim(store, records, t0 + 10, purpose="redrive")

    assert (renewed.lease_owner, renewed.lease_until) == (OWNER, t0 + 10 + LEASE)


def test_a_redrive_of_a_paused_session_is_refused(
    store: Store, records: Records, t0: float
) -> None:
    claim(store, records, t0)
    finish(store, records, status="paused", pending_id="p1")

    with pytest.raises(SessionBusy) as refused:
        claim(store, records, t0 + 10 * LEASE, purpose="redrive", owner=OTHER)

    assert (refused.value.status, refused.value.pending_id) == ("paused", "p1")


def test_a_session_past_its_retention_is_gone_and_a_message_starts_it_afresh(
    store: Store, records: Records, t0: float, clock: ManualClock
) -> None:
    claim(store, records, t0)
    finish(store, records, status="done", next_seq=5, expires_at=t0 + 100)
    assert store.sessions.load("s1") is not None

    clock.advance(101)
    claimed = claim(store, records, t0 + 101, owner=OTHER)

    assert (claimed.next_seq, claimed.lease_owner, claimed.expires_at) == (0, OTHER, None)
    assert store.sessions.load("s1") == claimed


def test_a_session_past_its_retention_is_invisible_before_any_deletion(
    store: Store, records: Records, t0: float, clock: ManualClock
) -> None:
    claim(store, records, t0)
    finish(store, records, status="done", expires_at=t0 + 100)

    clock.advance(100)

    assert store.sessions.load("s1") is None


# --- commit --------------------------------------------------------------------------------


def test_a_pause_commit_writes_session_chunk_pending_and_outbox(
    store: Store, records: Records, t0: float
) -> None:
    claim(store, records, t0)
    pending = records.pending("p1")
    outbox = [records.outbox("p1", "email"), records.outbox("p1", "slack")]
    ask = {"type": "actauth:decision", "tool": "refund", "decision": "ask", "reason": "money"}
    chunk = records.chunk(0, events=[ask])
    paused = records.session(status="paused", pending_id="p1", next_seq=1)

    store.sessions.commit(
        Commit(session=paused, chunk=chunk, pending=pending, outbox=outbox, release=True),
        owner=OWNER,
    )

    loaded = store.sessions.load("s1")
    assert loaded is not None
    assert (loaded.status, loaded.pending_id, loaded.next_seq) == ("paused", "p1", 1)
    assert (loaded.lease_owner, loaded.lease_until) == (None, None)
    assert list(store.sessions.read_log("s1")) == [chunk]
    assert store.pending.get("p1") == pending
    assert store.outbox.rows("p1") == outbox
    # the step's rule decision is audited from the log the commit wrote
    [entry] = store.audit.for_subject("s1")
    assert (entry.kind, entry.tool, entry.decision, entry.at) == ("rule", "refund", "ask", chunk.at)


def test_a_step_commit_keeps_the_lease(store: Store, records: Records, t0: float) -> None:
    claimed = claim(store, records, t0)

    store.sessions.commit(
        Commit(session=claimed.model_copy(update={"next_seq": 1}), chunk=records.chunk(0)),
        owner=OWNER,
    )

    loaded = store.sessions.load("s1")
    assert loaded is not None
    assert (loaded.status, loaded.lease_owner, loaded.next_seq) == ("running", OWNER, 1)
    with pytest.raises(SessionBusy):
        claim(store, records, t0 + 1, owner=OTHER)


def test_a_commit_after_the_lease_was_taken_over_is_refused_and_writes_nothing(
    store: Store, records: Records, t0: float
) -> None:
    claim(store, records, t0)
    claim(store, records, t0 + LEASE + 1, purpose="redrive", owner=OTHER)

    with pytest.raises(LeaseLost) as lost:
        store.sessions.commit(
            Commit(
                session=records.session(status="paused", pending_id="p1", next_seq=1),
                chunk=records.chunk(0, events=[{"type": "actauth:decision", "tool": "refund"}]),
                pending=records.pending("p1"),
                outbox=[records.outbox("p1", "slack")],
                release=True,
            ),
            owner=OWNER,
        )

    assert lost.value.session_id == "s1"
    loaded = store.sessions.load("s1")
    assert loaded is not None
    assert (loaded.status, loaded.lease_owner, loaded.next_seq) == ("running", OTHER, 0)
    assert list(store.sessions.read_log("s1")) == []
    assert store.pending.get("p1") is None
    assert store.outbox.rows("p1") == []
    assert store.audit.for_subject("s1") == []


def test_a_commit_of_a_chunk_already_written_is_refused_and_writes_nothing(
    store: Store, records: Records, t0: float
) -> None:
    claimed = claim(store, records, t0)
    first = records.chunk(0)
    store.sessions.commit(Commit(session=claimed, chunk=first), owner=OWNER)

    with pytest.raises(LeaseLost):
        store.sessions.commit(
            Commit(
                session=claimed.model_copy(update={"next_seq": 1}),
                chunk=records.chunk(0, run_id="run-other"),
                pending=records.pending("p1"),
            ),
            owner=OWNER,
        )

    assert list(store.sessions.read_log("s1")) == [first]
    assert store.pending.get("p1") is None
    loaded = store.sessions.load("s1")
    assert loaded is not None and loaded.next_seq == 0


def test_a_commit_to_a_session_never_claimed_is_refused(store: Store, records: Records) -> None:
    with pytest.raises(LeaseLost):
        store.sessions.commit(Commit(session=records.session(), release=True), owner=OWNER)

    assert store.sessions.load("s1") is None


# --- the log -------------------------------------------------------------------------------


def write_chunks(store: Store, records: Records, t0: float, seqs: list[int]) -> None:
    claimed = claim(store, records, t0)
    for seq in seqs:
        store.sessions.commit(Commit(session=claimed, chunk=records.chunk(seq)), owner=OWNER)


def test_read_log_returns_the_chunks_in_order_across_pages(
    store: Store, records: Records, t0: float
) -> None:
    # seven chunks at three per page, written out of order
    write_chunks(store, records, t0, [3, 0, 6, 1, 5, 2, 4])

    assert list(store.sessions.read_log("s1")) == [records.chunk(seq) for seq in range(7)]
    assert [c.seq for c in store.sessions.read_log("s1", from_seq=4)] == [4, 5, 6]
    assert list(store.sessions.read_log("s1", from_seq=7)) == []
    assert list(store.sessions.read_log("other")) == []


def test_read_log_fetches_the_next_page_only_when_it_is_reached(
    store: Store, records: Records, t0: float
) -> None:
    write_chunks(store, records, t0, list(range(6)))
    log = store.sessions.read_log("s1")
    first_page = [next(log).seq for _ in range(3)]

    # a chunk added after the first page was read still shows up on a later page
    store.sessions.commit(
        Commit(session=stored_session(store), chunk=records.chunk(6)), owner=OWNER
    )

    assert first_page == [0, 1, 2]
    assert [chunk.seq for chunk in log] == [3, 4, 5, 6]


def stored_session(store: Store) -> SessionRecord:
    loaded = store.sessions.load("s1")
    assert loaded is not None
    return loaded


def test_a_chunk_past_its_retention_is_not_read(
    store: Store, records: Records, t0: float, clock: ManualClock
) -> None:
    claimed = claim(store, records, t0)
    store.sessions.commit(
        Commit(session=claimed, chunk=records.chunk(0, expires_at=t0 + 10)), owner=OWNER
    )
    store.sessions.commit(Commit(session=claimed, chunk=records.chunk(1)), owner=OWNER)

    clock.advance(10)

    assert [chunk.seq for chunk in store.sessions.read_log("s1")] == [1]


def test_on_dynamodb_read_log_queries_one_page_at_a_time(
    aws: AwsResources, records: Records, t0: float, clock: ManualClock
) -> None:
    client = boto3.client("dynamodb")
    queries: list[int] = []
    client.meta.events.register("before-call.dynamodb.Query", lambda **_: queries.append(1))
    blobs = S3Blobs(aws.buckets["LargeValuesBucket"], boto3.client("s3"))
    store = DynamoStore(client, aws.tables["SignoffTable"], blobs, clock=clock, page_size=3)
    write_chunks(store, records, t0, list(range(7)))

    seqs = [chunk.seq for chunk in store.sessions.read_log("s1")]

    assert seqs == list(range(7))
    assert len(queries) == 3


# --- large values --------------------------------------------------------------------------


def big_text(size: int) -> str:
    # random letters, so packing (signoff.store.packing) keeps it over the limit
    return "".join(random.Random(size).choices(string.ascii_letters + string.digits, k=size))


def test_a_1mb_tool_result_reads_back_identical(store: Store, records: Records, t0: float) -> None:
    claimed = claim(store, records, t0)
    result = ToolResultMessage(call_id="c1", name="fetch", content=big_text(ONE_MB))
    chunk = records.chunk(0, messages=[result])

    store.sessions.commit(Commit(session=claimed, chunk=chunk), owner=OWNER)

    assert list(store.sessions.read_log("s1")) == [chunk]


def test_a_1mb_argument_in_the_checkpoint_reads_back_identical(
    store: Store, records: Records, t0: float
) -> None:
    claimed = claim(store, records, t0)
    call = ToolCall(id="c1", name="upload", args={"document": big_text(ONE_MB)})
    state = TurnState(
        agent="refunds",
        tenant="acme",
        environment="production",
        session_id="s1",
        run_id="run-1",
        batch=[CallState(call=call, status="awaiting")],
    )

    store.sessions.commit(Commit(session=claimed.model_copy(update={"state": state})), owner=OWNER)

    loaded = store.sessions.load("s1")
    assert loaded is not None and loaded.state == state
    assert loaded.lease_owner == OWNER


def raw_size(item: dict[str, dict[str, str | bytes]]) -> int:
    """An item's size from GetItem's raw answer: attribute names plus values (a
    binary value, a packed body, as its bytes)."""
    values = [next(iter(value.values())) for value in item.values()]
    return sum(len(name.encode()) for name in item) + sum(
        len(value if isinstance(value, bytes) else value.encode()) for value in values
    )


def test_on_dynamodb_1mb_values_leave_every_item_under_the_limit(
    aws: AwsResources, records: Records, t0: float, clock: ManualClock
) -> None:
    store = DynamoStore.from_env(clock=clock)
    claimed = claim(store, records, t0)
    result = ToolResultMessage(call_id="c", name="f", content=big_text(ONE_MB))
    call = ToolCall(id="c", name="upload", args={"document": big_text(ONE_MB)})
    state = TurnState(
        agent="refunds",
        tenant="acme",
        environment="production",
        session_id="s1",
        run_id="run-1",
        batch=[CallState(call=call)],
    )
    session = claimed.model_copy(update={"state": state})
    store.sessions.commit(
        Commit(session=session, chunk=records.chunk(0, messages=[result])), owner=OWNER
    )

    dynamodb, s3 = boto3.client("dynamodb"), boto3.client("s3")
    for sort_key in ("META", "L#0000000000000000"):
        raw = dynamodb.get_item(
            TableName=aws.tables["SignoffTable"],
            Key={"pk": {"S": "S#s1"}, "sk": {"S": sort_key}},
        )["Item"]

        assert raw_size(raw) < 400 * 1024
        blob_key = raw["body"]["S"].removeprefix("blob:")
        stored = s3.get_object(Bucket=aws.buckets["LargeValuesBucket"], Key=blob_key)
        assert len(stored["Body"].read()) > ONE_MB


# --- errors at the DynamoDB edge -----------------------------------------------------------


@pytest.mark.parametrize(
    "code", ["ProvisionedThroughputExceededException", "ThrottlingException", "InternalServerError"]
)
def test_on_dynamodb_throttling_becomes_store_unavailable(code: str) -> None:
    client = boto3.client("dynamodb", region_name="us-east-1")
    store = DynamoStore(client, "signoff", MemoryBlobs())
    with Stubber(client) as stub:
        stub.add_client_error("get_item", service_error_code=code, http_status_code=400)

        with pytest.raises(StoreUnavailable) as unavailable:
            store.sessions.load("s1")

    assert code in str(unavailable.value)


def test_on_dynamodb_a_throttled_transaction_becomes_store_unavailable(records: Records) -> None:
    client = boto3.client("dynamodb", region_name="us-east-1")
    store = DynamoStore(client, "signoff", MemoryBlobs())
    with Stubber(client) as stub:
        stub.add_client_error(
            "transact_write_items",
            service_error_code="TransactionCanceledException",
            modeled_fields={"CancellationReasons": [{"Code": "ThrottlingError"}]},
        )

        with pytest.raises(StoreUnavailable):
            store.sessions.commit(Commit(session=records.session()), owner=OWNER)


def test_on_dynamodb_a_missing_table_becomes_store_unavailable(
    aws: AwsResources, clock: ManualClock
) -> None:
    store = DynamoStore(boto3.client("dynamodb"), "no-such-table", MemoryBlobs(), clock=clock)

    with pytest.raises(StoreUnavailable):
        store.sessions.load("s1")


# --- stalled turns: the lease index --------------------------------------------------------


def checkpoint(session_id: str) -> TurnState:
    return TurnState(
        agent="refunds",
        tenant="acme",
        environment="production",
        session_id=session_id,
        run_id=f"run-{session_id}",
    )


def running(
    store: Store, records: Records, session_id: str, now: float, *, lease: float = LEASE
) -> None:
    """A turn under way: claimed for a message, then a step committed under the lease."""
    store.sessions.claim(
        records.session(session_id), purpose="message", owner=OWNER, until=now + lease, now=now
    )
    step = records.session(
        session_id,
        status="running",
        state=checkpoint(session_id),
        lease_until=now + lease,
        updated_at=now,
    )
    store.sessions.commit(Commit(session=step), owner=OWNER)


def stalled_ids(store: Store, before: float, limit: int = 100) -> list[str]:
    return [record.session_id for record in store.sessions.stalled(before, limit=limit)]


def test_stalled_lists_running_turns_whose_lease_ran_out_longest_stalled_first(
    store: Store, records: Records, t0: float
) -> None:
    # more sessions than one page holds (the contract store pages by 3)
    for session_id, started in [("s4", 40), ("s1", 10), ("s3", 30), ("s2", 20), ("s5", 50)]:
        running(store, records, session_id, t0 + started)

    assert stalled_ids(store, t0 + LEASE + 29) == ["s1", "s2"]
    assert stalled_ids(store, t0 + LEASE + 50) == ["s1", "s2", "s3", "s4", "s5"]
    assert stalled_ids(store, t0 + LEASE + 50, limit=4) == ["s1", "s2", "s3", "s4"]
    assert stalled_ids(store, t0 + LEASE) == []


def test_paused_and_finished_sessions_are_not_stalled(
    store: Store, records: Records, t0: float
) -> None:
    running(store, records, "s1", t0)
    running(store, records, "s2", t0)
    paused = records.session("s1", status="paused", pending_id="p1", state=checkpoint("s1"))
    store.sessions.commit(Commit(session=paused, release=True), owner=OWNER)
    finish(store, records, session_id="s2", status="done")

    assert stalled_ids(store, t0 + 10 * LEASE) == []


def test_a_message_that_never_committed_has_nothing_to_redrive(
    store: Store, records: Records, t0: float
) -> None:
    claim(store, records, t0)

    assert stalled_ids(store, t0 + 10 * LEASE) == []


def test_a_turn_that_yielded_without_a_lease_is_stalled_from_when_it_yielded(
    store: Store, records: Records, t0: float
) -> None:
    running(store, records, "s1", t0)
    yielded = records.session("s1", status="running", state=checkpoint("s1"), updated_at=t0 + 5)
    store.sessions.commit(Commit(session=yielded, release=True), owner=OWNER)

    assert stalled_ids(store, t0 + 4) == []
    assert stalled_ids(store, t0 + 5) == ["s1"]


def test_a_redrive_takes_the_turn_off_the_stalled_list_until_its_new_lease_runs_out(
    store: Store, records: Records, t0: float
) -> None:
    running(store, records, "s1", t0)
    store.sessions.claim(
        records.session("s1"),
        purpose="redrive",
        owner=OTHER,
        until=t0 + 2 * LEASE,
        now=t0 + LEASE,
    )

    assert stalled_ids(store, t0 + LEASE) == []
    assert stalled_ids(store, t0 + 2 * LEASE) == ["s1"]
    (record,) = store.sessions.stalled(t0 + 2 * LEASE)
    assert (record.lease_owner, record.state) == (OTHER, checkpoint("s1"))


def test_a_stalled_session_past_its_retention_is_not_listed(
    store: Store, records: Records, t0: float, clock: ManualClock
) -> None:
    store.sessions.claim(
        records.session("s1"), purpose="message", owner=OWNER, until=t0 + LEASE, now=t0
    )
    step = records.session(
        "s1", status="running", state=checkpoint("s1"), lease_until=t0 + LEASE, expires_at=t0 + 99
    )
    store.sessions.commit(Commit(session=step), owner=OWNER)

    clock.advance(100)

    assert stalled_ids(store, t0 + 100) == []


# --- a message whose process died ----------------------------------------------------------


def test_a_message_whose_process_died_before_its_first_commit_frees_the_session_with_its_lease(
    store: Store, records: Records, t0: float
) -> None:
    # killed mid-model-call: claimed for a message, nothing committed
    claim(store, records, t0)

    with pytest.raises(SessionBusy):
        claim(store, records, t0 + LEASE - 1, owner=OTHER)
    taken = claim(store, records, t0 + LEASE, owner=OTHER)

    assert (taken.status, taken.lease_owner, taken.lease_until) == (
        "running",
        OTHER,
        t0 + 2 * LEASE,
    )
    assert stalled_ids(store, t0 + 3 * LEASE) == [], "nothing of it for the sweeper to re-drive"


def test_a_turn_with_a_checkpoint_is_the_sweeper_s_never_a_message_s(
    store: Store, records: Records, t0: float
) -> None:
    running(store, records, "s1", t0)

    with pytest.raises(SessionBusy) as refused:
        claim(store, records, t0 + 2 * LEASE, owner=OTHER)

    assert refused.value.status == "running"
    assert stalled_ids(store, t0 + 2 * LEASE) == ["s1"]


@pytest.mark.parametrize(
    "port", ["SessionLog", "TurnSessions", "WatchedSessions", "GatedSessions", "StalledSessions"]
)
def test_the_adapter_is_each_narrow_port(store: Store, port: str) -> None:
    # every caller holds the adapter as its own narrow port: each method, as declared
    assert mismatches(store.sessions, getattr(base, port)) == []
