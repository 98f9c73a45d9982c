"""``people.yaml``: who is one person, whatever channel they decide through.

::

    people:
      alice: {email: alice@example.com, slack: U0ALICE, lark: ou_alice, apiKeys: [k-alice]}
      bob: {email: bob@example.com, slack: U0BOB}
    groups:
      finance-leads: [alice, bob]

It lives beside ``channels.yaml`` (a file of its own: the notifier reads
``channels.yaml`` on every send and never needs people, and a deployment
without multi-person rules never reads this one). An item whose policy needs
more than one approval (``signoff.gate.policy``) counts votes by person: the
Slack user id, the Lark open id, the email address a link was made for and an
API key id of one entry are one person. An actor is looked up by the identity
that verified it (``signoff.approver.actors.Identity``: its kind and value), so a Lark
open id never matches a Slack id, nor an address an API key, nor anything a
person's name. An identity in no entry counts as itself (its actor id) and is
nobody a rule's ``from`` names. A rule's ``from`` names people and groups;
``check_policies`` refuses unknown names and a quorum the names cannot reach
(``signoff check``, a cold start). A person's or group's name has no ``@`` and no
``:``: an inbox link's approver is a person's name or an email address, never both,
and never reads as an API key's actor id.
"""

import re
from functools import cached_property
from typing import TYPE_CHECKING, Annotated, Final

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from signoff import yamldocs
from signoff.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from signoff.approver.actors import Identity, IdentityKind
    from signoff.gate.rules import Rule

__all__ = ["PEOPLE_FILE", "People", "Person", "check_policies", "load_people"]

PEOPLE_FILE: Final = "people.yaml"
# A person's or group's name: what a rule's from and an inbox link name, never an
# address (no "@") nor an API key's actor id (no ":").
_NAME: Final = re.compile(r"^[^@:]+$")


def _listed(value: object) -> object:
    return [value] if isinstance(value, str) else value


class _Entry(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid", populate_by_name=True)


class Person(_Entry):
    """One person's identities on the channels (any of them may be absent)."""

    email: str | None = None
    slack: str | None = None
    lark: str | None = None
    api_keys: Annotated[tuple[str, ...], BeforeValidator(_listed)] = Field(
        default=(), alias="apiKeys"
    )

    def identities(self) -> "list[tuple[IdentityKind, str]]":
        """The identities this person decides as, by kind (an API key under any tenant)."""
        found: list[tuple[IdentityKind, str | None]] = [
            ("slack", self.slack),
            ("lark", self.lark),
            ("email", _folded(self.email) if self.email else None),
            *(("api_key", key) for key in self.api_keys),
        ]
        return [(kind, value) for kind, value in found if value]


def _folded(address: str) -> str:
    # one spelling of an address, as the email channel compares its approvers
    return address.strip().lower()


class People(_Entry):
    """The deployment's people and groups; empty when there is no ``people.yaml``."""

    people: dict[str, Person] = Field(default_factory=dict)
    groups: dict[str, Annotated[tuple[str, ...], BeforeValidator(_listed)]] = Field(
        default_factory=dict
    )

    @model_validator(mode="after")
    def _consistent(self) -> "People":
        for kind, names in (("people", self.people), ("groups", self.groups)):
            for name in names:
                if not _NAME.match(name):
                    raise ValueError(f"{kind}.{name}: a person's or group's name has no '@' or ':'")
        for group, members in self.groups.items():
            if group in self.people:
                raise ValueError(f"groups.{group}: a group and a person share the name")
            unknown = [name for name in members if name not in self.people]
            if unknown:
                raise ValueError(f"groups.{group}: no person named {', '.join(unknown)}")
        owner: dict[tuple[IdentityKind, str], str] = {}
        for name, person in self.people.items():
            for identity in person.identities():
                if owner.setdefault(identity, name) != name:
                    # one identity must name one person, or a vote would count for either
                    raise ValueError(f"people.{name}: {identity[1]} is {owner[identity]}'s too")
        return self

    @cached_property
    def _by_identity(self) -> "dict[tuple[IdentityKind, str], str]":
        return {
            identity: name
            for name, person in self.people.items()
            for identity in person.identities()
        }

    def person_of(self, identity: "Identity") -> str | None:
        """The person ``identity`` belongs to, found by its kind and value; None: nobody listed.

        An API key is its key id, whatever tenant it acts in (a key id is unique in the
        deployment). An inbox link's approver is the person it names, or the person
        whose address it is. A link that names nobody and an anonymous caller are
        nobody's.
        """
        kind, value = identity.kind, identity.value
        if kind == "inbox":
            if value in self.people:
                return value
            kind = "email"
        if kind == "email":
            value = _folded(value)
        if kind in ("link", "anonymous"):
            return None
        return self._by_identity.get((kind, value))

    def unknown(self, names: "Iterable[str]") -> list[str]:
        """The names that are neither a person nor a group."""
        return [name for name in names if name not in self.people and name not in self.groups]

    def expand(self, names: "Iterable[str]") -> frozenset[str]:
        """The people ``names`` (people and groups) stand for."""
        found: set[str] = set()
        for name in names:
            found.update(self.groups.get(name, (name,)))
        return frozenset(found)


def load_people(path: "Path") -> People:
    """Load and validate ``people.yaml``; a missing file is a deployment without a directory.

    Raises:
        ConfigError: the file is unreadable or invalid.
    """
    file = str(path)
    try:
        raw = yamldocs.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return People()
    except OSError as exc:
        raise ConfigError(file, "", f"cannot be read: {exc.strerror or exc}") from exc
    except yamldocs.YAMLError as exc:
        raise ConfigError(file, "", f"invalid YAML: {exc}") from exc
    if raw is None:
        return People()
    try:
        return People.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        field = ".".join(str(part) for part in error["loc"])
        raise ConfigError(file, field, str(error["msg"]).removeprefix("Value error, ")) from exc


def check_policies(rules: "Iterable[Rule]", people: People, rules_file: str) -> None:
    """Refuse a rule whose ``from`` names nobody known, or fewer people than it needs.

    Raises:
        ConfigError: names the rule (by name or place) and the problem.
    """
    for number, rule in enumerate(rules, start=1):
        where = f"rules.{rule.name or number}"
        if not rule.from_:
            continue
        unknown = people.unknown(rule.from_)
        if unknown:
            raise ConfigError(
                rules_file,
                f"{where}.from",
                f"no person or group named {', '.join(unknown)} in {PEOPLE_FILE}",
            )
        voters = len(people.expand(rule.from_))
        needed = max(rule.approvals, rule.deny_quorum)
        if needed > voters:
            raise ConfigError(
                rules_file,
                f"{where}",
                f"needs {needed} different people and 'from' names only {voters}",
            )
