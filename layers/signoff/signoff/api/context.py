"""What the routes share: the deployment's services, the caller's tenant, the deadline."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from signoff.errors import NotFound, SendFailed
from signoff.keys.api_keys import caller_for

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from aws_lambda_powertools.event_handler.api_gateway import BaseRouter

    from signoff.agents import Agent, AgentCatalog
    from signoff.api.models import MessageBody
    from signoff.channels.base import Channel
    from signoff.channels.config import ChannelsConfig
    from signoff.clock import Clock
    from signoff.continuations.base import Continuations
    from signoff.durable.turns import Turns
    from signoff.keys.sessions import SessionKeys
    from signoff.keys.tokens import Signer
    from signoff.secrets.base import SecretSource
    from signoff.settings import Deployment
    from signoff.store.base import ApiKeys, InboxPending, OutboxRows, WatchedSessions

__all__ = ["Api", "ChatChannels", "api_of"]

# API Gateway's HTTP API answers 503 after 30 s whatever the function does, so
# a request's turn yields well before that and goes on in the background.
API_GATEWAY_LIMIT = 30.0


@dataclass(kw_only=True)
class ChatChannels:
    """The deployment's chat channels: their settings, secrets and senders.

    A service of the deployment like the others here, not of the chat routes: the
    click logic (``signoff.api.clicks``) and the routes (``signoff.api.chat``) both
    read it through ``Api.chat``.
    """

    config: ChannelsConfig
    secrets: SecretSource
    # Built one by one (channels.build.ChannelSet): a chat channel that cannot be
    # built (its bot token missing) leaves the other channels' clicks working.
    channels: Mapping[str, Channel] = field(default_factory=dict)

    def of_type(self, kind: type[Any]) -> list[tuple[str, Any]]:
        return [(n, s) for n, s in self.config.channels.items() if isinstance(s, kind)]

    def updater(self, name: str, receipt: dict[str, str] | None) -> Callable[[str], None]:
        """Shows an outcome in the message ``receipt`` names (nothing when there is none,
        or when the channel cannot be built: the decision stands without the update)."""
        try:
            sender: Any = self.channels.get(name)
        except SendFailed:
            sender = None  # ChannelSet logged why it cannot be built

        def update(text: str) -> None:
            if sender is not None and receipt:
                sender.update_outcome(receipt, text)

        return update


@dataclass(frozen=True, kw_only=True)
class Api:
    """One deployment's services, built once per cold start."""

    turns: Turns
    agents: AgentCatalog
    sessions: WatchedSessions
    pending: InboxPending
    # What each pending item was sent to: a chat click or an email link decides
    # only through a channel with the item's row.
    outbox: OutboxRows
    api_keys: ApiKeys
    # Built on first use: reading the signing secret is a network call the
    # message function's cold start should not make.
    make_signer: Callable[[], Signer]
    # Built on first use too: only a message without a sessionId but with its
    # agent's sessionKey needs the session-key secret.
    make_session_keys: Callable[[], SessionKeys]
    continuations: Continuations
    clock: Clock
    environment: str
    allow_anonymous: bool
    # The chat channels (Slack, Lark) whose clicks the resolve function takes.
    make_chat: Callable[[], ChatChannels] | None = None
    # Seconds a request's turn may run before it answers 202 "running".
    request_budget: float = API_GATEWAY_LIMIT - 5.0
    # Seconds kept free before the Lambda's own end for the final checkpoint.
    safety_margin: float = 3.0
    max_body_bytes: int = 256 * 1024
    # The settings read at cold start (the model override the config route shows);
    # None where an Api is built by hand, and the environment is read instead.
    deployment: Deployment | None = None

    @cached_property
    def signer(self) -> Signer:
        """Signs and verifies resume tokens; its keys follow the secret (signoff.keys.keyring)."""
        return self.make_signer()

    @cached_property
    def session_keys(self) -> SessionKeys:
        """Derives session ids from an agent's ``sessionKey`` (signoff.keys.sessions)."""
        return self.make_session_keys()

    @cached_property
    def chat(self) -> ChatChannels:
        """The chat channels, built on the first click.

        Raises:
            NotFound: the deployment defines no chat channels.
        """
        if self.make_chat is None:
            raise NotFound("chat channels", "")
        return self.make_chat()

    def tenant(self, headers: Mapping[str, str], agent: str | None = None) -> str:
        """The caller's tenant, from its API key (``x-api-key`` or a bearer token).

        For a request to ``agent``, its ``tenant_for`` hook may map the verified key
        to another tenant (``caller``).

        Raises:
            Unauthorized: no key where one is required, or an unknown / revoked key.
            UnknownAgent: no agent called ``agent`` (checked after the key).
            ConfigError: the agent's files, or its ``tenant_for``, failed.
        """
        return self.caller(headers, agent)[0]

    def caller(
        self, headers: Mapping[str, str], agent: str | None = None
    ) -> tuple[str, str | None]:
        """The caller's tenant and API key id (None for an anonymous caller).

        The key is verified first (an unauthenticated caller learns nothing of the
        agents); only then may ``agent``'s ``tenant_for`` hook pick the tenant, from
        what the key verified as and nothing the client sent
        (``signoff.agents.hooks.Hooks.tenant``).

        Raises:
            Unauthorized: no key where one is required, or an unknown / revoked key.
            UnknownAgent: no agent called ``agent``.
            ConfigError: the agent's files, or its ``tenant_for``, failed.
        """
        lowered = {k.lower(): v for k, v in headers.items()}
        key = lowered.get("x-api-key")
        authorization = lowered.get("authorization", "")
        if key is None and authorization.lower().startswith("bearer "):
            key = authorization[7:].strip()
        tenant, key_id = caller_for(self.api_keys, key, allow_anonymous=self.allow_anonymous)
        if agent is None:
            return tenant, key_id
        return self.agents.get(agent).hooks.tenant(tenant, key_id), key_id

    def deadline(self, lambda_context: Any, *, interactive: bool) -> float:
        """The monotonic time by which this invocation's turn must yield."""
        budget = float("inf")
        if lambda_context is not None and hasattr(lambda_context, "get_remaining_time_in_millis"):
            budget = lambda_context.get_remaining_time_in_millis() / 1000 - self.safety_margin
        if interactive:
            budget = min(budget, self.request_budget)
        return self.clock.monotonic() + max(budget, 0.0)

    def session_of(self, agent: Agent, body: MessageBody, tenant: str) -> str | None:
        """The session a message names: ``sessionId``, else the one its ``sessionKey`` derives.

        An agent's ``session_id_for`` hook is asked first, with the JSON body; when it
        returns None the rules above apply. Whatever picks the id, the session stays
        its creator's: ``Turns.send`` answers 404 for a session of another tenant or
        agent. None when nothing names a session: the turn starts a new one.

        Raises:
            ConfigError: the agent's ``session_id_for`` failed.
        """
        if agent.hooks.session_id_for is not None:
            chosen = agent.hooks.session_id(body.model_dump(by_alias=True, exclude_none=True))
            if chosen is not None:
                return chosen
        if body.session_id:
            return body.session_id
        key = agent.config.session_key
        value = (body.model_extra or {}).get(key) if key else None
        if not key or value is None or value == "":
            return None
        return self.session_keys.session_id(tenant=tenant, agent=agent.name, key=key, value=value)


def api_of(router: BaseRouter) -> Api:
    """The deployment the current request runs in."""
    api: Api = router.context["api"]
    return api
