"""Who may resolve a pending item: a resume token for it, or a key of its tenant."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from signoff.errors import Forbidden, NotFound, TokenForged
from signoff.tokens import args_hash

if TYPE_CHECKING:
    from collections.abc import Mapping

    from signoff.api.context import Api
    from signoff.store.records import PendingItem
    from signoff.tokens import Decision, ResumeToken

__all__ = ["Decider", "decider_for", "item_for_token"]


@dataclass(frozen=True)
class Decider:
    """Who decides, as the audit trail records it."""

    actor: str
    channel: str


def decider_for(
    api: Api,
    item: PendingItem,
    decision: Decision,
    *,
    headers: Mapping[str, str],
    token: str | None,
) -> Decider:
    """Check the caller may make ``decision`` on ``item``.

    Raises:
        TokenForged: a token that is not for this item and decision (403).
        TokenExpired: a genuine token past its expiry (410).
        Unauthorized: no token, and no valid API key (401).
        Forbidden: an API key of another tenant (403).
    """
    if token:
        check_token(api, item, api.signer.verify(token, time.time()), decision)
        return Decider(actor="link", channel="link")
    tenant = api.tenant(headers)
    if tenant != item.tenant:
        raise Forbidden(f"pending item {item.id} belongs to another tenant")
    return Decider(actor=f"tenant:{tenant}", channel="api")


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
