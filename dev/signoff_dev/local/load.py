"""A load test of the local stack: many sessions paused and resolved at once, over loopback.

``run_load`` drives a started ``LocalStack`` with ``clients`` threads, each with
its own HTTP client. Together they work through ``sessions`` sessions; for each
one a client:

1. sends the customer-service refund message with a session id of its own and
   expects a 202 approval;
2. waits for that item's notification at the local webhook sink (one watcher
   thread reads ``GET /_local/notifications`` for all the clients);
3. approves it: even-numbered sessions through the link page (``GET`` the page,
   then ``POST`` its form with the page's origin, as a browser does), odd ones
   through ``POST /approvals/{id}/approve`` with no API key (anonymous callers
   are the ``default`` tenant locally);
4. polls the session's status URL until it is ``done``.

The whole run is bounded by ``timeout``: a session not done by then is a
failure, reported with the step it was at. Afterwards ``LoadReport`` counts,
from the emulator's DynamoDB table (read through boto3) and the sink:

- the turns that finished;
- every outbox row of every pending item: sent (``notified_at`` set), and its
  attempts;
- deliveries per (pending id, channel): exactly one each, repeats
  counted as duplicates;
- human audit entries per pending item: exactly one (no item resolved twice),
  and each item's stored status ``approved``.

The figure to compare between runs is the throughput: completed approvals
(sessions ``done``) per second of wall time, from the first message to the
last ``done``. It measures the local stack, emulator included, not AWS: HTTP
invocations run one at a time (``signoff_dev.local.functions``), DynamoDB requests
one at a time (``signoff_dev.local.emulator``), and moto deep-copies the whole
table for every ``TransactWriteItems``, so the rate falls as the table grows.
Compare runs of the same size on the same versions.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import boto3
import httpx

from signoff_dev.local.demo import AGENT, MESSAGES, PageForm
from signoff_dev.local.sink import notification_of
from signoff_dev.local.template import REGION

if TYPE_CHECKING:
    from signoff.store.dynamodb import DynamoStore
    from signoff.store.pending_records import OutboxRow
    from signoff_dev.local.stack import LocalStack

__all__ = ["LoadReport", "run_load"]

_POLL: Final = 0.05
_REQUEST_TIMEOUT: Final = 60.0
_EMULATOR_ID: Final = "local"  # moto takes any credentials; no real endpoint takes these


@dataclass
class _Session:
    """What one client learnt about one session."""

    index: int
    session_id: str = ""
    pending_id: str = ""
    status_url: str = ""
    via: str = ""  # "page" or "api"
    done: bool = False
    error: str = ""


@dataclass
class LoadReport:
    """The counts after a run; ``failures`` lists every check that did not hold."""

    sessions: int
    clients: int
    seconds: float = 0.0
    done: int = 0
    via_page: int = 0
    via_api: int = 0
    pending_items: int = 0
    outbox_rows: int = 0
    rows_sent: int = 0
    attempts: Counter[int] = field(default_factory=Counter)  # attempts → rows
    deliveries: int = 0  # verified deliveries for these items
    delivered_once: int = 0  # (pending id, channel) pairs delivered exactly once
    duplicates: int = 0  # deliveries beyond the first per (pending id, channel)
    undelivered: int = 0  # outbox rows with no delivery
    approved_once: int = 0  # items with exactly one human audit entry
    resolved_twice: int = 0  # items with more than one
    status_approved: int = 0  # items whose stored status is approved
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def throughput(self) -> float:
        """Completed approvals per second."""
        return self.done / self.seconds if self.seconds > 0 else 0.0

    def lines(self) -> list[str]:
        """The count checks, one per line, then the summary."""
        attempts = ", ".join(f"{n} attempt(s): {rows}" for n, rows in sorted(self.attempts.items()))
        expected_rows = self.outbox_rows
        return [
            f"turns finished        {self.done}/{self.sessions} done "
            f"({self.via_page} approved on the link page, {self.via_api} through the API)",
            f"pending items         {self.pending_items}/{self.sessions}",
            f"outbox rows sent      {self.rows_sent}/{self.outbox_rows} notified_at set "
            f"({attempts or 'none'})",
            f"deliveries           {self.deliveries}: {self.delivered_once}/{expected_rows} "
            f"(pending id, channel) exactly once, {self.duplicates} duplicate(s), "
            f"{self.undelivered} missing",
            f"resolutions           {self.approved_once}/{self.pending_items} approved exactly "
            f"once (human audit entries), {self.resolved_twice} resolved twice, "
            f"{self.status_approved} stored as approved",
            *(f"FAILED: {failure}" for failure in self.failures[:20]),
            *([f"FAILED: … and {len(self.failures) - 20} more"] if len(self.failures) > 20 else []),
            self.summary(),
        ]

    def summary(self) -> str:
        verdict = "all checks hold" if self.ok else f"{len(self.failures)} check(s) FAILED"
        return (
            f"local stack load: {self.sessions} sessions, {self.clients} clients, "
            f"{self.done} done in {self.seconds:.2f} s: {self.throughput:.1f} approvals/s "
            f"({verdict})"
        )


class _Notifications:
    """One thread reading the sink's listing for every client; ``wait`` for one item's."""

    def __init__(self, base_url: str, stop: threading.Event) -> None:
        self._http = httpx.Client(base_url=base_url, timeout=_REQUEST_TIMEOUT)
        self._seen: dict[str, dict[str, Any]] = {}
        self._changed = threading.Condition()
        self._stop = stop
        self._thread = threading.Thread(target=self._run, name="load-sink-watcher", daemon=True)
        self.error = ""

    def start(self) -> None:
        self._thread.start()

    def join(self) -> None:
        self._thread.join(timeout=5.0)
        self._http.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                listed = self._http.get("/_local/notifications").json()["notifications"]
            except (httpx.HTTPError, ValueError, KeyError) as exc:
                self.error = f"the sink's listing: {exc}"
                time.sleep(_POLL)
                continue
            with self._changed:
                for received in listed:
                    notification = received.get("notification", {})
                    sent = notification_of(notification)
                    pending_id = None if sent is None else sent.pending_id
                    if pending_id and pending_id not in self._seen:
                        self._seen[pending_id] = notification
                self._changed.notify_all()
            self._stop.wait(_POLL)

    def wait(self, pending_id: str, deadline: float) -> dict[str, Any] | None:
        with self._changed:
            while pending_id not in self._seen:
                left = deadline - time.monotonic()
                if left <= 0 or self._stop.is_set():
                    return None
                self._changed.wait(min(left, 1.0))
            return self._seen[pending_id]


class _Client(threading.Thread):
    """One client: takes the next session number until none are left, walks it through."""

    def __init__(
        self,
        base_url: str,
        run: str,
        next_index: Any,
        sessions: list[_Session],
        notifications: _Notifications,
        deadline: float,
    ) -> None:
        super().__init__(name=f"load-client-{run}", daemon=True)
        self._base_url = base_url
        self._run_id = run
        self._next = next_index
        self._sessions = sessions
        self._notifications = notifications
        self._deadline = deadline
        self._http = httpx.Client(
            base_url=base_url, timeout=_REQUEST_TIMEOUT, follow_redirects=False
        )

    def run(self) -> None:
        try:
            while (index := self._next()) is not None:
                session = self._sessions[index]
                try:
                    self._walk(session)
                except (httpx.HTTPError, ValueError, KeyError) as exc:
                    session.error = session.error or f"{type(exc).__name__}: {exc}"
        finally:
            self._http.close()

    def _walk(self, session: _Session) -> None:
        session.session_id = f"load-{self._run_id}-{session.index:04d}"
        body = {"message": MESSAGES["approve"], "sessionId": session.session_id}
        sent = self._http.post(f"/agents/{AGENT}/messages", json=body)
        if sent.status_code != 202 or sent.json().get("type") != "approval":
            session.error = f"the message: expected a 202 approval, got {sent.status_code}: "
            session.error += sent.text[:200]
            return
        paused = sent.json()
        session.session_id = str(paused["sessionId"])
        session.pending_id = str(paused["id"])
        session.status_url = str(paused["statusUrl"])
        notification = self._notifications.wait(session.pending_id, self._deadline)
        if notification is None:
            session.error = f"no notification for {session.pending_id} reached the sink in time"
            return
        if session.index % 2 == 0:
            session.via = "page"
            if not self._approve_on_page(session, str(notification.get("linkUrl", ""))):
                return
        else:
            session.via = "api"
            decided = self._http.post(f"/approvals/{session.pending_id}/approve")
            if decided.status_code not in (200, 202):
                session.error = f"POST /approvals/…/approve: {decided.status_code} "
                session.error += decided.text[:200]
                return
        while time.monotonic() < self._deadline:
            status = self._http.get(session.status_url)
            if status.status_code == 200 and status.json().get("status") == "done":
                session.done = True
                return
            time.sleep(_POLL)
        session.error = f"session {session.session_id} was not done in time (approved via "
        session.error += f"{session.via})"

    def _approve_on_page(self, session: _Session, link: str) -> bool:
        if not link.startswith(self._base_url):
            session.error = f"the notification has no link to this stack: {link!r}"
            return False
        path = link.removeprefix(self._base_url)
        shown = self._http.get(path)
        if shown.status_code != 200:
            session.error = f"GET the link page: {shown.status_code}"
            return False
        page = PageForm.parse(shown.text)
        form = {**page.fields, "decision": "approve"}
        posted = self._http.post(page.action or path, data=form, headers={"origin": self._base_url})
        if posted.status_code != 200:
            session.error = f"POST Approve on the link page: {posted.status_code} "
            session.error += PageForm.parse(posted.text).text[:200]
            return False
        return True


def _store(stack: LocalStack) -> DynamoStore:
    """The stack's store, read over boto3 against the emulator."""
    from signoff.store.dynamodb import DynamoStore
    from signoff.store.s3 import S3Blobs

    endpoint = stack.aws_endpoint
    s3 = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=_EMULATOR_ID,
        aws_secret_access_key=_EMULATOR_ID,
    )
    dynamodb = boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=_EMULATOR_ID,
        aws_secret_access_key=_EMULATOR_ID,
    )
    blobs = S3Blobs(stack.resources.environment["SIGNOFF_BUCKET"], s3)
    return DynamoStore(dynamodb, stack.resources.tables["SignoffTable"], blobs)


def run_load(
    stack: LocalStack, *, sessions: int = 200, clients: int = 20, timeout: float = 300.0
) -> LoadReport:
    """Drive ``sessions`` approvals through ``stack`` with ``clients`` threads; count.

    Never raises for a failed session: every failure is in the report's ``failures``.
    """
    report = LoadReport(sessions=sessions, clients=clients)
    walked = [_Session(index=n) for n in range(sessions)]
    counter = iter(range(sessions))
    counter_lock = threading.Lock()

    def next_index() -> int | None:
        with counter_lock:
            return next(counter, None)

    stop = threading.Event()
    notifications = _Notifications(stack.url, stop)
    run = uuid.uuid4().hex[:6]
    started = time.monotonic()
    deadline = started + timeout
    workers = [
        _Client(stack.url, f"{run}", next_index, walked, notifications, deadline)
        for _ in range(clients)
    ]
    notifications.start()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(max(0.0, deadline - time.monotonic()) + _REQUEST_TIMEOUT)
    report.seconds = time.monotonic() - started
    stop.set()
    notifications.join()
    if any(worker.is_alive() for worker in workers):
        report.failures.append(f"client threads still running after the {timeout:.0f} s bound")
    report.done = sum(1 for s in walked if s.done)
    report.via_page = sum(1 for s in walked if s.done and s.via == "page")
    report.via_api = sum(1 for s in walked if s.done and s.via == "api")
    report.failures.extend(
        f"session {s.index}: {s.error or 'not finished'}" for s in walked if not s.done
    )
    if notifications.error and report.done < sessions:
        report.failures.append(notifications.error)
    _count(stack, walked, report)
    return report


def _count(stack: LocalStack, walked: list[_Session], report: LoadReport) -> None:
    """The outbox rows, their deliveries (webhook sink, mailbox), each item's audit trail."""
    store = _store(stack)
    sent = [(r.sent, r.webhook_id) for r in stack.sink.received()]
    by_pair = Counter(
        (str(None if note is None else note.pending_id), webhook_id.rsplit(":", 1)[-1])
        for note, webhook_id in sent
    )
    by_pair.update(_captured_emails(stack))
    items = [s for s in walked if s.pending_id]
    report.pending_items = len(items)
    for session in items:
        pid = session.pending_id
        item = store.pending.get(pid)
        if item is None:
            report.failures.append(f"pending item {pid}: not in the table")
            continue
        rows = store.outbox.rows(pid)
        if sorted(row.channel for row in rows) != sorted(item.channels) or not rows:
            report.failures.append(
                f"pending item {pid}: outbox rows {[r.channel for r in rows]}, "
                f"channels {item.channels}"
            )
        for row in rows:
            _count_row(report, pid, row, by_pair.get((pid, row.channel), 0))
        human = [
            entry.decision
            for entry in store.audit.for_subject(session.session_id)
            if entry.kind == "human" and entry.pending_id == pid
        ]
        _count_decisions(report, pid, human)
        if item.status == "approved":
            report.status_approved += 1
        else:
            report.failures.append(f"pending item {pid}: stored status {item.status}")


def _count_row(report: LoadReport, pid: str, row: OutboxRow, delivered: int) -> None:
    """One outbox row: sent, its attempts, and how many times it was delivered."""
    report.outbox_rows += 1
    report.attempts[row.attempts] += 1
    if row.notified_at is not None:
        report.rows_sent += 1
    else:
        report.failures.append(f"outbox row {pid}/{row.channel}: never sent")
    report.deliveries += delivered
    if delivered == 0:
        report.undelivered += 1
        report.failures.append(f"outbox row {pid}/{row.channel}: nothing delivered")
    elif delivered == 1:
        report.delivered_once += 1
    else:
        report.duplicates += delivered - 1
        report.failures.append(f"outbox row {pid}/{row.channel}: {delivered} deliveries")


def _count_decisions(report: LoadReport, pid: str, decisions: list[str]) -> None:
    """The decisions people took on one item (its human audit entries): exactly one."""
    if len(decisions) == 1 and decisions[0] == "approved":
        report.approved_once += 1
    elif len(decisions) > 1:
        report.resolved_twice += 1
        report.failures.append(f"pending item {pid}: resolved {len(decisions)} times")
    else:
        report.failures.append(f"pending item {pid}: human audit entries {decisions}")


def _captured_emails(stack: LocalStack) -> Counter[tuple[str, str]]:
    """(pending id, channel) of each captured mail.

    The item is the one its link's resume token verifies for; the channel is the
    email channel with the mail's sender and recipients.
    """
    from signoff.channels.http_notifier import deployment_channels
    from signoff.channels.settings.email import EmailSettings

    config = deployment_channels(stack.agents_dir)
    channels = {
        (str(settings.sender), tuple(sorted(map(str, settings.to)))): name
        for name, settings in config.channels.items()
        if isinstance(settings, EmailSettings)
    }
    signer = stack.message_api().signer
    found: Counter[tuple[str, str]] = Counter()
    for email in stack.mailbox.emails():
        channel = channels.get((email.sender, tuple(sorted(email.to))), f"email to {email.to}")
        items = {
            signer.verify(link.rsplit("/", 1)[-1], time.time()).pending_id
            for link in email.links
            if "/a/" in link
        }
        found.update((item, channel) for item in items)
    return found
