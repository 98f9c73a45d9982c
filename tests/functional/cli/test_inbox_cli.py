"""``signoff inbox`` and ``signoff audit`` as an operator runs them, against a moto server.

The rows are those of the HTTP views (``signoff.approvals.inbox``): the tenant's pending items,
its history newest first with refusals marked, the CSV export; ``--link`` prints an
inbox link whose token the deployment's signing secret verifies for that approver.
"""

from __future__ import annotations

import csv
import io
import json
import time
from urllib.parse import parse_qs, urlsplit

from signoff.keys.tokens import RESUME_SIGNING_SECRET, signer_from
from signoff.secrets.aws import SecretsManagerSecrets
from signoff.store.dynamodb import DynamoStore
from signoff.store.records import AuditEntry
from signoff.store.session_records import Commit, SessionRecord
from tests.support.aws import moto_server as moto_server
from tests.support.builders import pending_approval
from tests.support.cli import signoff_cli


def seed(now: float) -> list[AuditEntry]:
    """Two items waiting (acme, globex) and three acme entries, one a refusal."""
    store = DynamoStore.from_env()
    for number, tenant in enumerate(["acme", "globex"]):
        item = pending_approval(
            f"p{number}",
            session_id=f"s{number}",
            tenant=tenant,
            requested_at=now - 120,
            expires_at=now + 3600,
            reason="matched rule 'large-refunds'",
        )
        session = SessionRecord(
            session_id=item.session_id, agent="refunds", tenant=tenant, environment="production"
        )
        store.sessions.claim(session, purpose="message", owner="o", until=now + 60, now=now)
        paused = session.model_copy(update={"status": "paused"})
        store.sessions.commit(Commit(session=paused, pending=item, release=True), owner="o")
    entries = [
        AuditEntry(
            id=f"e{n}",
            subject="s9",
            at=now - 60 + n,
            kind=kind,
            decision=decision,
            actor=actor,
            channel="inbox",
            tool="refund",
            tenant="acme",
            agent="refunds",
            reason=reason,
        )
        for n, (kind, decision, actor, reason) in enumerate(
            [
                ("human", "approved", "alice@example.com", ""),
                ("refusal", "refused", "mallory", "=not one of the approvers"),
                ("human", "denied", "bob", 'too large, "really"'),
            ]
        )
    ]
    store.audit.record(entries)
    return entries


def test_inbox_lists_the_tenants_pending_items(moto_server: dict[str, str]) -> None:
    seed(time.time())

    listed = signoff_cli("inbox", "--tenant", "acme", "--json", **moto_server)
    table = signoff_cli("inbox", "--tenant", "acme", **moto_server)

    assert listed.returncode == 0, listed.stderr
    [item] = json.loads(listed.stdout)["items"]
    assert (item["pendingId"], item["rule"], item["tool"]) == ("p0", "large-refunds", "refund")
    assert item["ageSeconds"] >= 120
    assert table.returncode == 0, table.stderr
    header, row = table.stdout.splitlines()
    assert header.split("\t")[:4] == ["pending_id", "age", "agent", "tool"]
    assert row.split("\t")[0] == "p0" and "large-refunds" in row.split("\t")


def test_audit_prints_the_history_and_its_csv_matches_the_store(
    moto_server: dict[str, str],
) -> None:
    entries = seed(time.time())

    exported = signoff_cli("audit", "--tenant", "acme", "--since", "1h", "--csv", **moto_server)
    denied = signoff_cli(
        "audit", "--tenant", "acme", "--decision", "denied", "--json", **moto_server
    )
    table = signoff_cli("audit", "--tenant", "acme", **moto_server)

    assert exported.returncode == 0, exported.stderr
    rows = list(csv.DictReader(io.StringIO(exported.stdout, newline="")))
    assert [row["id"] for row in rows] == [e.id for e in reversed(entries)]
    assert [row["actor"] for row in rows] == ["bob", "mallory", "alice@example.com"]
    assert rows[1]["reason"] == "'=not one of the approvers" and rows[1]["refused"] == "true"
    assert rows[0]["reason"] == 'too large, "really"'
    assert [e["id"] for e in json.loads(denied.stdout)] == ["e2"]
    assert "refused (refused)" in table.stdout


def test_inbox_link_prints_a_link_for_the_approver(moto_server: dict[str, str]) -> None:
    env = {**moto_server, "SIGNOFF_PUBLIC_URL": "https://api.example.com"}

    made = signoff_cli(
        "inbox",
        "--link",
        "--tenant",
        "acme",
        "--approver",
        "alice@example.com",
        "--ttl",
        "2h",
        **env,
    )

    assert made.returncode == 0, made.stderr
    link = urlsplit(made.stdout.strip())
    assert (link.scheme, link.netloc, link.path) == ("https", "api.example.com", "/inbox")
    [token] = parse_qs(link.query)["token"]
    signer = signer_from(SecretsManagerSecrets.from_env((RESUME_SIGNING_SECRET,)))
    grant = signer.verify_inbox(token, time.time())
    assert (grant.tenant, grant.approver) == ("acme", "alice@example.com")
    assert 7100 < grant.expires_at - time.time() <= 7200
    refused = signoff_cli("inbox", "--link", "--tenant", "acme", **env)
    assert refused.returncode != 0 and "--approver" in refused.stderr
    # the names the audit gives nobody's link, the sweeper and a key are nobody's inbox
    for system in ("link", "sweeper", "apikey:sk_1@acme"):
        refused = signoff_cli("inbox", "--link", "--approver", system, **env)
        assert refused.returncode != 0 and "is the name of no person" in refused.stderr
