"""``signoff keys create | revoke | list``: the API keys that map callers to tenants.

The keys live in the deployment's table (``SIGNOFF_TABLE``; ``AWS_ENDPOINT_URL``
points boto3 at a local endpoint). A clear key is printed once, on stdout, when
it is created, so ``signoff keys create … > key.txt`` captures nothing else;
no command ever prints a key's hash.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from signoff.clock import iso
from signoff.errors import UsageError

if TYPE_CHECKING:
    import argparse

    from signoff.store.base import ApiKeys
    from signoff.store.records import ApiKey

__all__ = ["register"]

EXIT_OK = 0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``keys`` command and its subcommands to the ``signoff`` parser."""
    keys = commands.add_parser("keys", help="create, revoke and list API keys")
    actions = keys.add_subparsers(required=True, metavar="action")

    create = actions.add_parser("create", help="create a key for a tenant; prints it once")
    create.add_argument("--tenant", required=True, help="the tenant the key's callers act as")
    create.add_argument("--label", default="", help="a note for whoever reads the listing")
    create.set_defaults(command=_create)

    revoke = actions.add_parser("revoke", help="revoke a key by its id (sk_…)")
    revoke.add_argument("key_id", metavar="KEY_ID", help="the key's id, as `keys list` shows it")
    revoke.set_defaults(command=_revoke)

    listing = actions.add_parser("list", help="list key ids and tenants (never the keys)")
    listing.add_argument("--tenant", default=None, help="only this tenant's keys")
    listing.set_defaults(command=_list)


def _store() -> ApiKeys:
    # Checked here as well as in from_env: a command-line user needs to hear
    # which table is meant, not that the template sets it for every function.
    if not os.environ.get("SIGNOFF_TABLE"):
        raise UsageError(
            "SIGNOFF_TABLE is not set: name the DynamoDB table that holds the API keys "
            "(and set AWS_ENDPOINT_URL to use a local endpoint)"
        )
    from signoff.store.dynamodb import DynamoStore

    # The keys are small rows of the table: no bucket needed (docs/deploying.md's commands
    # set only SIGNOFF_TABLE).
    return DynamoStore.from_env(need_bucket=False).api_keys


def _when(epoch: float) -> str:
    return iso(datetime.fromtimestamp(epoch, UTC))


def _row(key: ApiKey) -> str:
    state = "active" if key.revoked_at is None else f"revoked {_when(key.revoked_at)}"
    return "\t".join([key.key_id, key.tenant, state, _when(key.created_at), key.label])


def _create(args: argparse.Namespace) -> int:
    from signoff.keys.api_keys import new_api_key

    store = _store()
    clear, key = new_api_key(args.tenant, args.label, time.time())
    store.add(key)
    print(clear, flush=True)
    print(
        f"signoff: created API key {key.key_id} for tenant {key.tenant}; "
        "it is shown only this once",
        file=sys.stderr,
    )
    return EXIT_OK


def _revoke(args: argparse.Namespace) -> int:
    key = _store().revoke(args.key_id, at=time.time())
    print(_row(key))
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    for key in _store().list(args.tenant):
        print(_row(key))
    return EXIT_OK
