"""``signoff keys`` as an operator runs it: a real subprocess against a moto server."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from signoff.errors import Unauthorized
from signoff.keys.api_keys import hash_key, tenant_for
from signoff.store.dynamodb import DynamoStore
from tests.conftest import ROOT
from tests.support.aws import moto_server as moto_server

KEY_ID = re.compile(r"\bsk_[a-z0-9]{8}\b")
HEX_64 = re.compile(r"\b[0-9a-f]{64}\b")


def signoff(
    *args: str, env: dict[str, str], unset: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """Run ``signoff keys …`` with ``env`` on top of this process's, less ``unset``."""
    full = {**os.environ, **env}
    for name in unset:
        full.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "signoff_dev.cli.main", "keys", *args],
        cwd=ROOT,
        env=full,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )


def create(tenant: str, env: dict[str, str], *extra: str) -> tuple[str, str]:
    """Create a key with the CLI: (clear key, key id)."""
    done = signoff("create", "--tenant", tenant, *extra, env=env)
    assert done.returncode == 0, done.stderr
    found = KEY_ID.search(done.stderr)
    assert found is not None, done.stderr
    return done.stdout.strip(), found.group(0)


def test_a_created_key_resolves_to_its_tenant(moto_server: dict[str, str]) -> None:
    done = signoff("create", "--tenant", "acme", "--label", "deploy bot", env=moto_server)

    assert done.returncode == 0, done.stderr
    clear = done.stdout.strip()
    assert done.stdout == clear + "\n", "stdout holds the key and nothing else"
    key_id = KEY_ID.search(done.stderr)
    assert key_id is not None and clear.startswith(f"sok_{key_id.group(0)}_")
    assert clear not in done.stderr
    store = DynamoStore.from_env()
    assert tenant_for(store.api_keys, clear, allow_anonymous=False) == "acme"
    stored = store.api_keys.find(hash_key(clear))
    assert stored is not None and (stored.key_id, stored.label) == (key_id.group(0), "deploy bot")


def test_a_revoked_key_no_longer_resolves(moto_server: dict[str, str]) -> None:
    clear, key_id = create("acme", moto_server)
    store = DynamoStore.from_env()
    assert tenant_for(store.api_keys, clear, allow_anonymous=False) == "acme"

    done = signoff("revoke", key_id, env=moto_server)

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{key_id}\tacme\trevoked ")
    with pytest.raises(Unauthorized, match="invalid API key"):
        tenant_for(store.api_keys, clear, allow_anonymous=True)


def test_revoking_an_unknown_key_fails_naming_it(moto_server: dict[str, str]) -> None:
    done = signoff("revoke", "sk_nobody00", env=moto_server)

    assert done.returncode == 1
    assert "no API key 'sk_nobody00'" in done.stderr


def test_list_shows_ids_and_tenants_but_never_a_key_or_a_hash(moto_server: dict[str, str]) -> None:
    acme, acme_id = create("acme", moto_server, "--label", "ci")
    globex, globex_id = create("globex", moto_server)
    assert signoff("revoke", globex_id, env=moto_server).returncode == 0

    everything = signoff("list", env=moto_server)
    only_acme = signoff("list", "--tenant", "acme", env=moto_server)

    assert everything.returncode == 0, everything.stderr
    rows = [line.split("\t") for line in everything.stdout.splitlines()]
    assert [(row[0], row[1]) for row in rows] == [(acme_id, "acme"), (globex_id, "globex")]
    assert rows[0][2] == "active" and rows[0][4] == "ci"
    assert rows[1][2].startswith("revoked ")
    assert [line.split("\t")[0] for line in only_acme.stdout.splitlines()] == [acme_id]
    for output in (everything.stdout + everything.stderr, only_acme.stdout):
        for clear in (acme, globex):
            assert clear not in output
            assert hash_key(clear) not in output
        assert HEX_64.search(output) is None


def test_without_a_table_it_is_a_usage_error(moto_server: dict[str, str]) -> None:
    done = signoff("list", env=moto_server, unset=("SIGNOFF_TABLE",))

    assert done.returncode == 2
    assert "SIGNOFF_TABLE is not set" in done.stderr
    assert done.stdout == ""


def test_the_table_alone_is_enough(moto_server: dict[str, str]) -> None:
    """As docs/deploying.md runs it: ``SIGNOFF_TABLE=… signoff keys create``, no bucket named."""
    env = {k: v for k, v in moto_server.items() if k != "SIGNOFF_BUCKET"}
    done = signoff("create", "--tenant", "acme", env=env, unset=("SIGNOFF_BUCKET",))

    assert done.returncode == 0, done.stderr
    listed = signoff("list", env=env, unset=("SIGNOFF_BUCKET",))
    assert listed.returncode == 0, listed.stderr
    assert "\tacme\tactive\t" in listed.stdout
    assert (
        tenant_for(DynamoStore.from_env().api_keys, done.stdout.strip(), allow_anonymous=False)
        == "acme"
    )


def test_create_needs_a_tenant(moto_server: dict[str, str]) -> None:
    done = signoff("create", env=moto_server)

    assert done.returncode == 2
    assert "--tenant" in done.stderr
