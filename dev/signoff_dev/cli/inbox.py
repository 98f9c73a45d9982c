"""``signoff inbox`` and ``signoff audit``: the approvals inbox in a terminal.

``signoff inbox`` lists a tenant's items waiting for a decision, ``signoff audit``
its history of decisions (refusals marked), with the filters of ``GET /inbox`` —
the rows are ``signoff.approvals.inbox``'s, the same as the HTTP views. ``signoff inbox
--link --approver A`` prints a signed, expiring inbox link for one approver
(``SIGNOFF_PUBLIC_URL`` and the signing secret's ``SIGNOFF_RESUME_SIGNING_SECRET_ARN``;
``signoff dev``'s banner exports both, with the table).

The store is the deployment's table (``SIGNOFF_TABLE``, and ``SIGNOFF_BUCKET`` for
items too large for one row; ``AWS_ENDPOINT_URL`` points boto3 at a local endpoint,
the local stack's included), as for ``signoff keys``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import TYPE_CHECKING
from urllib.parse import quote

from signoff.approvals.inbox import (
    audit_filter,
    history,
    history_csv,
    parse_duration,
    pending_rows,
)
from signoff.approver.actors import LINK, SWEEPER
from signoff.errors import UsageError
from signoff.keys.api_keys import ANONYMOUS_TENANT

if TYPE_CHECKING:
    import argparse

    from signoff.store.dynamodb import DynamoStore

__all__ = ["register"]

EXIT_OK = 0
INBOX_COLUMNS = ("pending_id", "age", "agent", "tool", "rule", "step", "votes", "summary")
AUDIT_COLUMNS = ("at", "decision", "actor", "channel", "agent", "tool", "pending_id", "reason")
DEFAULT_LINK_TTL = "7d"


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``inbox`` and ``audit`` commands to the ``signoff`` parser."""
    inbox = commands.add_parser(
        "inbox", help="a tenant's items waiting for a decision, or (--link) an approver's link"
    )
    inbox.add_argument(
        "--tenant", default=ANONYMOUS_TENANT, help="whose inbox (default: %(default)s)"
    )
    inbox.add_argument("--json", action="store_true", help="one JSON document (GET /inbox's)")
    inbox.add_argument(
        "--link", action="store_true", help="print a signed inbox link for --approver instead"
    )
    inbox.add_argument("--approver", default=None, help="the email address or person id")
    inbox.add_argument(
        "--ttl", default=DEFAULT_LINK_TTL, help="how long the link works (default: %(default)s)"
    )
    inbox.set_defaults(command=_inbox)

    audit = commands.add_parser("audit", help="a tenant's history of decisions (refusals marked)")
    audit.add_argument(
        "--tenant", default=ANONYMOUS_TENANT, help="whose history (default: %(default)s)"
    )
    audit.add_argument("--since", default=None, help="7d, 12h, an ISO time (default: 7d)")
    audit.add_argument("--until", default=None, help="the same forms; exclusive")
    for name in ("agent", "tool", "decision", "actor", "channel"):
        audit.add_argument(f"--{name}", default=None, help=f"only entries of this {name}")
    form = audit.add_mutually_exclusive_group()
    form.add_argument("--csv", action="store_true", help="CSV, as GET /inbox/audit.csv")
    form.add_argument("--json", action="store_true", help="a JSON list of the entries")
    audit.set_defaults(command=_audit)


def _store() -> DynamoStore:
    if not os.environ.get("SIGNOFF_TABLE"):
        raise UsageError(
            "SIGNOFF_TABLE is not set: name the DynamoDB table of the deployment "
            "(and set AWS_ENDPOINT_URL to use a local endpoint)"
        )
    from signoff.store.dynamodb import DynamoStore

    # the bucket only where it is set: an item too large for its row names it then
    return DynamoStore.from_env(need_bucket=False)


def _line(values: tuple[object, ...]) -> str:
    # one row per line whatever the model wrote: tabs and newlines shown escaped
    cells = ("" if v is None else str(v) for v in values)
    escaped = (c.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n") for c in cells)
    return "\t".join(escaped)


def _inbox(args: argparse.Namespace) -> int:
    if args.link:
        return _link(args)
    store = _store()
    rows = pending_rows(store.pending, args.tenant, time.time())
    if args.json:
        document = {
            "tenant": args.tenant,
            "items": [row.model_dump(by_alias=True, mode="json") for row in rows],
        }
        print(json.dumps(document, indent=2))
        return EXIT_OK
    print("\t".join(INBOX_COLUMNS))
    for row in rows:
        approvals = sum(1 for vote in row.votes if vote.decision == "approve")
        tally = f"{approvals}/{row.approvals_needed}" if row.approvals_needed > 1 else ""
        voters = ",".join(vote.person for vote in row.votes)
        print(
            _line(
                (
                    row.pending_id,
                    f"{row.age_seconds}s",
                    row.agent,
                    row.tool or row.kind,
                    row.rule,
                    row.escalation_step,
                    f"{tally} {voters}".strip(),
                    row.summary,
                )
            )
        )
    return EXIT_OK


def _link(args: argparse.Namespace) -> int:
    from signoff.keys.tokens import RESUME_SIGNING_SECRET, signer_from
    from signoff.secrets.aws import SecretsManagerSecrets
    from signoff.settings import Deployment

    if not args.approver:
        raise UsageError("--link needs --approver: the email address or person id it is for")
    if args.approver in (LINK.id, SWEEPER) or ":" in args.approver:
        # the audit and the pages name nobody's link, the sweeper and an API key
        # (apikey:<key id>@<tenant>) so: a person's decision must never read as them
        raise UsageError(f"--approver {args.approver!r} is the name of no person: give theirs")
    ttl = parse_duration(args.ttl)
    if ttl is None or ttl <= 0:
        raise UsageError(f"--ttl {args.ttl!r}: give a duration such as 7d, 12h or 30m")
    deployment = Deployment.from_env()
    base = deployment.public_url.rstrip("/")
    if not base:
        raise UsageError("SIGNOFF_PUBLIC_URL is not set: the link needs the API's address")
    secrets = SecretsManagerSecrets.from_env((RESUME_SIGNING_SECRET,), deployment=deployment)
    token = signer_from(secrets).issue_inbox(args.tenant, args.approver, time.time() + ttl)
    print(f"{base}/inbox?token={quote(token)}")
    return EXIT_OK


def _audit(args: argparse.Namespace) -> int:
    store = _store()
    filters = audit_filter(
        time.time(),
        since=args.since,
        until=args.until,
        agent=args.agent,
        tool=args.tool,
        decision=args.decision,
        actor=args.actor,
        channel=args.channel,
    )
    rows = history(store.audit, args.tenant, filters)
    if args.csv:
        sys.stdout.write(history_csv(rows))
        return EXIT_OK
    if args.json:
        print(json.dumps([row.model_dump(by_alias=True, mode="json") for row in rows], indent=2))
        return EXIT_OK
    print("\t".join(AUDIT_COLUMNS))
    for row in rows:
        decision = f"{row.decision} (refused)" if row.refused else row.decision
        values = (row.at, decision, row.actor, row.channel, row.agent, row.tool, row.pending_id)
        print(_line((*values, row.reason)))
    return EXIT_OK
