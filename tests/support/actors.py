"""People who decide in tests, as ``signoff.approver.actors`` builds them for the real ways in."""

from __future__ import annotations

from signoff.approver.actors import Actor, Identity

__all__ = ["person"]


def person(id: str, channel: str = "api") -> Actor:
    """``id`` deciding through ``channel``, named as an inbox link names its approver:
    ``people.yaml`` finds them by their name or their address."""
    return Actor(id=id, channel=channel, identity=Identity(kind="inbox", value=id))
