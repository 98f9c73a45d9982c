"""An agent's hooks as code: the optional ``hooks.py`` of its folder.

loopengine's ``AgentConfig`` takes functions (``onRunStart``, ``onRunFinish``,
``tenantFor``, ``sessionIdFor``); a YAML file cannot hold them, so an agent
folder may have a ``hooks.py`` defining any of:

- ``on_run_start(ctx: RunStart)`` — a run began: a message, or a resolution
  that resumed a paused run (``ctx.trigger``);
- ``on_run_finish(ctx: RunFinish)`` — a run reached a genuine end (done,
  ``max_turns``, ``denied``); never at a pause;
- ``tenant_for(headers: Mapping[str, str]) -> str | None`` — the tenant of an
  HTTP request, from its *verified* headers only (``signoff.api.context``);
- ``session_id_for(body: dict) -> str | None`` — the session a message
  continues, from its JSON body.

The run hooks are fire-and-forget, as in loopengine: each runs on a thread of
its own, an exception (or a failed coroutine) is logged with the agent and the
hook's name and never reaches the turn, and the turn waits for a hook at most
``HOOK_WAIT`` seconds. Where they fire is the lifecycle announcements' one
channel rule (``signoff.run_channels.announces``): never for ``cli`` or
``http_stream``, whose caller already sees the run start and end, and a resumed
run counts as the channel it started on. They fire in the process that runs that
part of the run: a resume's ``on_run_start`` and the finish of a run that paused
fire in the function that resumed it (the resolve function, the sweeper, a
continuation), never at the pause.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
import threading
import time
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Literal

from signoff.agents.modules import import_agent_file
from signoff.errors import ConfigError
from signoff.gate.decision import TENANT
from signoff.run_channels import announces

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from signoff.run_channels import RunChannel, Trigger

__all__ = [
    "HOOK_WAIT",
    "NO_HOOKS",
    "SESSION_ID",
    "VERIFIED_KEY_ID",
    "VERIFIED_TENANT",
    "Hooks",
    "RunFinish",
    "RunStart",
    "load_hooks",
]

log = logging.getLogger(__name__)

# The longest a turn waits for one run hook before it answers anyway. A Lambda
# sandbox freezes once the handler returns, so a hook still running then may be
# cut off: the wait lets a quick hook (a log line, one HTTP call) finish, while a
# slow one costs the response no more than this.
HOOK_WAIT: Final = 2.0

# The verified headers ``tenant_for`` sees (``Hooks.tenant``).
VERIFIED_TENANT: Final = "x-signoff-tenant"
VERIFIED_KEY_ID: Final = "x-signoff-key-id"
# What a message's ``sessionId`` may be (the API's MessageBody), for ids a hook picks too.
SESSION_ID: Final = re.compile(r"[A-Za-z0-9_.:-]{1,128}")

# loopengine's names, pointing to their Python home here.
_RENAMED: Final = {
    "onRunStart": "on_run_start",
    "onRunFinish": "on_run_finish",
    "tenantFor": "tenant_for",
    "sessionIdFor": "session_id_for",
}


@dataclass(frozen=True, kw_only=True)
class RunStart:
    """What ``on_run_start`` is told; loopengine's names (``sessionId``) read too."""

    agent: str
    tenant: str
    session_id: str
    channel: RunChannel | None
    trigger: Trigger
    run_id: str

    @property
    def sessionId(self) -> str:  # loopengine's name, for hooks ported from it
        return self.session_id


@dataclass(frozen=True, kw_only=True)
class RunFinish:
    """What ``on_run_finish`` is told; loopengine's names (``sessionId``,
    ``stopReason``) read too."""

    agent: str
    tenant: str
    session_id: str
    channel: RunChannel | None
    text: str
    stop_reason: Literal["max_turns", "denied"] | None
    run_id: str

    @property
    def sessionId(self) -> str:  # loopengine's name, for hooks ported from it
        return self.session_id

    @property
    def stopReason(self) -> str | None:  # loopengine's name, for hooks ported from it
        return self.stop_reason


@dataclass(frozen=True, kw_only=True)
class Hooks:
    """The functions an agent's ``hooks.py`` defines; None where it defines none."""

    agent: str = ""
    file: str = ""
    on_run_start: Callable[[RunStart], Any] | None = None
    on_run_finish: Callable[[RunFinish], Any] | None = None
    tenant_for: Callable[[Mapping[str, str]], str | None] | None = None
    session_id_for: Callable[[dict[str, Any]], str | None] | None = None

    def tenant(self, verified: str, key_id: str | None) -> str:
        """The tenant of a request whose API key verified as ``verified`` (key ``key_id``).

        ``tenant_for`` is given the verified headers only: ``x-signoff-tenant`` (the
        key's tenant) and ``x-signoff-key-id`` (absent for an anonymous caller). The
        request's own headers never reach it — any of them (``x-tenant-id``, …) is
        the client's to set — so a client gets no other tenant than its key maps to.
        The key itself is left out too: it is a secret and already checked. None
        keeps the key's tenant.

        Raises:
            ConfigError: the hook raised, or returned something that is not a tenant;
                the request fails closed (500) rather than run under a guessed tenant.
        """
        if self.tenant_for is None:
            return verified
        headers = {VERIFIED_TENANT: verified}
        if key_id is not None:
            headers[VERIFIED_KEY_ID] = key_id
        try:
            chosen = self.tenant_for(MappingProxyType(headers))
        except Exception as error:
            raise ConfigError(self.file, "tenant_for", _failure(error)) from error
        if chosen is None:
            return verified
        if not isinstance(chosen, str) or not TENANT.fullmatch(chosen):
            raise ConfigError(
                self.file, "tenant_for", f"returned {chosen!r}, not a tenant (1-128 chars, no '/')"
            )
        return chosen

    def session_id(self, body: dict[str, Any]) -> str | None:
        """The session ``session_id_for`` picks from a message's JSON body (None: no pick).

        Raises:
            ConfigError: the hook raised, or returned something that is not a session id.
        """
        if self.session_id_for is None:
            return None
        try:
            chosen = self.session_id_for(body)
        except Exception as error:
            raise ConfigError(self.file, "session_id_for", _failure(error)) from error
        if chosen is None:
            return None
        if not isinstance(chosen, str) or not SESSION_ID.fullmatch(chosen):
            raise ConfigError(
                self.file,
                "session_id_for",
                f"returned {chosen!r}, not a session id ({SESSION_ID.pattern})",
            )
        return chosen

    def run_started(self, ctx: RunStart) -> Fired | None:
        """Start ``on_run_start`` in the background (None: no hook, or not on this channel)."""
        if not announces(ctx.channel):
            return None
        return _fire(self.agent, "on_run_start", self.on_run_start, ctx)

    def run_finished(self, ctx: RunFinish) -> Fired | None:
        """Start ``on_run_finish`` in the background (None: no hook, or not on this channel)."""
        if not announces(ctx.channel):
            return None
        return _fire(self.agent, "on_run_finish", self.on_run_finish, ctx)


NO_HOOKS: Final = Hooks()


class Fired:
    """A run hook running on its own thread; ``wait`` gives it what is left of ``HOOK_WAIT``."""

    def __init__(self, agent: str, name: str, thread: threading.Thread, wait: float) -> None:
        self.agent = agent
        self.name = name
        self._thread = thread
        self._until = time.monotonic() + wait
        self._wait = wait

    def wait(self) -> bool:
        """Wait until the hook ends or its time is up; True when it ended."""
        self._thread.join(max(self._until - time.monotonic(), 0.0))
        if self._thread.is_alive():
            log.warning(
                "hook %s of agent %s still runs after %.1fs; the turn goes on without it",
                self.name,
                self.agent,
                self._wait,
                extra={"agent": self.agent, "hook": self.name},
            )
            return False
        return True


def _fire(agent: str, name: str, hook: Callable[[Any], Any] | None, ctx: Any) -> Fired | None:
    if hook is None:
        return None

    def run() -> None:
        # Whatever the hook does, it ends here: a failed announcement never fails the turn.
        try:
            result = hook(ctx)
            if inspect.isawaitable(result):
                asyncio.run(_awaited(result))
        except Exception as error:
            log.warning(
                "hook %s of agent %s failed: %s: %s",
                name,
                agent,
                type(error).__name__,
                error,
                exc_info=True,
                extra={"agent": agent, "hook": name},
            )

    # A daemon thread: a hook that never returns does not keep the process alive.
    thread = threading.Thread(target=run, name=f"hook-{agent}-{name}", daemon=True)
    thread.start()
    return Fired(agent, name, thread, HOOK_WAIT)


def _failure(error: Exception) -> str:
    return f"raised {type(error).__name__}: {error}"


async def _awaited(awaitable: Any) -> None:
    await awaitable


def load_hooks(path: Path, agent: str) -> Hooks:
    """The hooks ``path`` defines (no hooks when the file does not exist).

    Raises:
        ConfigError: the file does not import, a hook is not callable, or it uses
            loopengine's camelCase name (the error names the Python one).
    """
    if not path.exists():
        return Hooks(agent=agent)
    module = import_agent_file(path, "signoff_agent_hooks", agent)
    found = vars(module)
    for old, new in _RENAMED.items():
        if old in found:
            raise ConfigError(str(path), old, f"hooks are snake_case here: define {new}(...)")
    hooks: dict[str, Any] = {}
    for name in ("on_run_start", "on_run_finish", "tenant_for", "session_id_for"):
        value = found.get(name)
        if value is not None and not callable(value):
            raise ConfigError(str(path), name, "must be a function")
        hooks[name] = value
    return Hooks(agent=agent, file=str(path), **hooks)
