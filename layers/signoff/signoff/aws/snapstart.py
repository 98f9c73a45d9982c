"""SnapStart: what every execution environment restored from one snapshot makes anew.

With ``EnableSnapStart=true`` (template.yaml) Lambda runs a function's init once, when
a version is published, snapshots the environment's memory, and starts each new
execution environment of that version from a copy of it (docs/snapstart.md). Init
here is the module level of ``functions/<fn>/app.py``: the ``*_from_env`` builders.
What they made that must differ between environments is made again after each
restore by the runtime's hooks (``snapshot_restore_py.register_after_restore``, which
Lambda's python runtimes provide; elsewhere ``signoff.aws.snapshot_restore`` stands
in, and nothing runs them):

- the lease owner of the durable turns (``Turns.owner``) and the send-lock owner of
  the notifier (``Notifier.owner``). A session's lease and an outbox row's lock are
  re-entrant for their owner (``store.rules.claimable``, ``sendable``): two
  environments with one owner id would each take the other's live lease as its own,
  and both write one turn;
- the ``random`` module's state: seeded once at import, so every copy would draw the
  same numbers (botocore's and urllib3's retry jitter, Powertools' log sampling), and
  the logger's sampling decision, drawn from it at init;
- what an ``Api`` builds on first use and keeps with a clock reading (its rotating
  signer's key set, read at a monotonic time; the session keys; the chat channels and
  their tokens). Init builds none of them; one that was built is dropped, and the
  first request that needs it builds it again.

Safe to keep as the snapshot holds them:

- ids: ``new_id`` draws ``os.urandom`` and reads the clock at every call; nothing of
  it is seeded at init;
- boto3 clients and their connection pools (``signoff.awsclients``: built on first
  use; the secrets provider's at init): init opens no connection, and one a restore
  broke is opened again by urllib3 when a call finds it closed, within botocore's retries;
- credentials: a SnapStart function gets its role's credentials from Lambda's
  container credentials endpoint, not as fixed keys, and botocore fetches them again
  as they near their expiry, by the wall clock, which is right after a restore;
- the deployment's settings, its agents and their parsed YAML: the version's, alike in
  every copy.

Built ahead for the snapshot (``prime_before_snapshot``), by a before-snapshot hook,
which the runtime runs only when it takes a snapshot: the boto3 clients made so far
(``signoff.awsclients``), the validators and serializers of every loaded signoff
model (pydantic builds them on first use), and the agents' tool specs (their JSON
schemas). A restored environment's first request would build them otherwise;
without SnapStart nothing moves into init.
"""

from __future__ import annotations

import importlib
import random
import sys
import time
import weakref
from typing import TYPE_CHECKING, Final, Protocol

from signoff.ids import new_id
from signoff.telemetry import logger

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from types import ModuleType

    from signoff.agents import Agent
    from signoff.api.context import Api

__all__ = [
    "API_LAZY_PARTS",
    "Agents",
    "Owned",
    "prime",
    "prime_before_snapshot",
    "renew_after_restore",
    "restore_hooks",
]

# The Api's cached properties that may hold a clock reading (see the module).
API_LAZY_PARTS: Final = ("signer", "session_keys", "chat")


class Owned(Protocol):
    """What holds a lease or a lock under an owner id of its own (Turns, Notifier)."""

    owner: str


class Agents(Protocol):
    """The agents whose tools ``prime`` builds (``AgentCatalog``)."""

    def names(self) -> list[str]: ...

    def problems(self) -> Mapping[str, object]: ...

    def get(self, name: str) -> Agent: ...


def restore_hooks() -> ModuleType:
    """The runtime's ``snapshot_restore_py``; where it is not importable, the stand-in."""
    try:
        return importlib.import_module("snapshot_restore_py")
    except ImportError:
        from signoff.aws import snapshot_restore

        return snapshot_restore


def renew_after_restore(*holders: Owned, api: Api | None = None) -> None:
    """After each restore from a snapshot, give ``holders`` new owner ids, reseed
    ``random`` (and the log sampling), and drop what ``api`` built with a clock reading.

    Called by the builders at init, with what they built. The hook holds them weakly:
    an object nothing else keeps (a test's, the local stack's) is not kept for it.
    """
    refs = tuple(weakref.ref(holder) for holder in holders)
    api_ref = None if api is None else weakref.ref(api)
    restore_hooks().register_after_restore(_renew, refs, api_ref)


def _renew(refs: tuple[weakref.ref[Owned], ...], api_ref: weakref.ref[Api] | None) -> None:
    for ref in refs:
        holder = ref()
        if holder is not None:
            holder.owner = new_id()
    random.seed()  # from os.urandom
    if logger.sampling_rate:
        logger.refresh_sample_rate_calculation()
    api = None if api_ref is None else api_ref()
    if api is not None:
        for name in API_LAZY_PARTS:
            vars(api).pop(name, None)  # a cached_property built again on first use


_primed = False
# The agents of the builders that asked, for their tools' specs; held weakly.
_catalogs: weakref.WeakSet[Agents] = weakref.WeakSet()


def prime_before_snapshot(agents: Agents | None = None) -> None:
    """Have the runtime ``prime`` the process (and ``agents``' tools) before it takes a
    SnapStart snapshot.

    Called by the builders at init; registers once per process however many call it.
    """
    global _primed
    if agents is not None:
        _catalogs.add(agents)
    if not _primed:
        _primed = True
        restore_hooks().register_before_snapshot(lambda: prime(list(_catalogs)))


def prime(agents: Iterable[Agents] = ()) -> dict[str, int]:
    """Build what a first request would build lazily and every copy may share: the boto3
    clients made so far, the loaded signoff models' validators and serializers, and
    the tool specs of ``agents``. Returns how many of each were built.

    A part that fails is logged and left to be built on first use, as without
    SnapStart: an error raised here would fail the version's publication instead.
    """
    started = time.perf_counter()
    from signoff.awsclients import build_made

    parts: dict[str, Callable[[], int]] = {
        "clients": build_made,
        "models": _build_models,
        "tools": lambda: _build_tools(agents),
    }
    built: dict[str, int] = {}
    for part, build in parts.items():
        try:
            built[part] = build()
        except Exception as exc:  # a failure here would fail the publication (docstring)
            logger.warning("not primed", extra={"part": part, "error": repr(exc)[:500]})
    logger.info(
        "primed before the snapshot",
        extra={**built, "ms": round((time.perf_counter() - started) * 1e3, 1)},
    )
    return built


def _build_models() -> int:
    """Build each deferred pydantic model and type adapter a signoff module defines."""
    from pydantic import BaseModel, TypeAdapter

    built = 0
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "signoff" or name.startswith("signoff.")):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, type) and issubclass(value, BaseModel):
                if value.__module__ == name and not value.__pydantic_complete__:
                    # One that cannot be built yet (a reference still unresolved) is
                    # built on first use, as without SnapStart.
                    built += bool(value.model_rebuild(raise_errors=False))
            elif isinstance(value, TypeAdapter) and not value.pydantic_complete:
                built += bool(value.rebuild(raise_errors=False))
    return built


def _build_tools(agents: Iterable[Agents]) -> int:
    """Each healthy agent's tool specs (a misconfigured one was logged at init)."""
    built = 0
    for catalog in agents:
        broken = catalog.problems()
        for name in catalog.names():
            if name in broken:
                continue
            for tool in catalog.get(name).tools.values():
                tool.arguments.model_rebuild(raise_errors=False)
                _ = tool.spec  # a cached_property: the JSON schema, built once
                built += 1
    return built
