"""Who may resolve a pending item: a resume token for it, or a key of its tenant.

A decision names its actor (``signoff.approver.actors.Actor``: the identity that verified
it, by kind) and comes with the entry point's check, run on the item inside
``Turns.decide`` so that a refusal is audited like a decision:

- an API key decides as ``apikey:<key id>@<tenant>`` through ``api`` (a caller
  without a key, where allowed, as ``anonymous@<tenant>``), only items of its
  own tenant;
- a link made for one email recipient decides as that address through its email
  channel, only if the item was sent there and the address is one of the
  channel's recipients and (when listed) approvers;
- a link that names nobody (a webhook's, the answer link of a chat channel
  without approvers) decides as ``link``: whoever holds it was sent it. A chat
  channel with approvers is sent no such link, only ``view`` links.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from signoff.approver.actors import LINK, Actor, api_caller, link_recipient
from signoff.durable.decide import not_sent_to
from signoff.errors import NotFound, SignoffError, TokenForged
from signoff.keys.tokens import args_hash

if TYPE_CHECKING:
    from collections.abc import Mapping

    from signoff.api.context import Api
    from signoff.durable.decide import Check
    from signoff.keys.tokens import Decision, ResumeToken
    from signoff.store.pending_records import PendingItem

__all__ = ["check_token", "decider_for", "item_for_token", "link_decider"]


def decider_for(
    api: Api,
    item: PendingItem,
    decision: Decision,
    *,
    headers: Mapping[str, str],
    token: str | None,
) -> tuple[Actor, Check]:
    """Who makes ``decision`` on ``item``, and the check ``Turns.decide`` runs for them.

    Raises:
        TokenForged: a token that is not for this item and decision (403).
        TokenExpired: a genuine token past its expiry (410).
        Unauthorized: no token, and no valid API key (401).
    """
    if token:
        granted = api.signer.verify(token, api.clock.now().timestamp())
        check_token(api, item, granted, decision)
        return link_decider(api, granted)
    # the tenant the item's agent gives this key (its tenant_for), as its messages got
    tenant, key_id = api.caller(headers, item.agent)
    actor = api_caller(key_id, tenant)  # no key id: a deployment that allows no key

    def same_tenant(item: PendingItem, actor: Actor) -> str | None:
        # a key decides only its own tenant's items
        return None if item.tenant == tenant else "the request belongs to another tenant"

    return actor, same_tenant


def link_decider(api: Api, token: ResumeToken) -> tuple[Actor, Check]:
    """The actor a verified link decides as, and the check of its channel."""
    if token.recipient is None or token.channel is None:
        return LINK, _anyone
    recipient, channel = token.recipient, token.channel

    def email_recipient(item: PendingItem, actor: Actor) -> str | None:
        # loaded already where channels.yaml defines an email channel
        from signoff.channels.settings.email import EmailSettings

        settings = api.agents.channels.channels.get(channel)
        # the channel the link was mailed through still exists and is an email channel
        if not isinstance(settings, EmailSettings):
            return f"{channel} is no email channel of this deployment"
        # the address is still one of its recipients (a removed recipient's links stop)
        if not settings.mails(recipient):
            return f"{recipient} is not a recipient of {channel}"
        # and, where the channel lists approvers, one of them
        if not settings.allows(recipient):
            return f"{recipient} is not one of the approvers of {channel}"
        try:
            agent = api.agents.get(item.agent)
        except SignoffError:
            return f"the agent {item.agent} is gone"
        # the item was sent through that channel
        return not_sent_to(item, channel, agent=agent, outbox=api.outbox)

    return link_recipient(recipient, channel), email_recipient


def _anyone(item: PendingItem, actor: Actor) -> str | None:
    return None


def check_token(api: Api, item: PendingItem, token: ResumeToken, decision: Decision) -> None:
    """A token decides only its own item, tenant and arguments, and only what it permits."""
    if (
        token.pending_id != item.id
        or token.tenant != item.tenant
        or token.args_hash != args_hash(item.args)
        or not token.permits(decision)
    ):
        raise TokenForged()


def item_for_token(api: Api, token: ResumeToken) -> PendingItem:
    """The pending item a verified token is about.

    Raises:
        NotFound: the item is gone (retention passed).
    """
    item = api.pending.get(token.pending_id)
    if item is None:
        raise NotFound("pending item", token.pending_id)
    return item
