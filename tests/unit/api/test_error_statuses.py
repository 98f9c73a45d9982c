"""The status table is total: every error signoff defines has a status, through its family."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import signoff
from signoff.api.errors import STATUS, error_payload, status_of
from signoff.errors import FAMILIES, InvalidSignature, SendFailed, SignoffError


def _every_error() -> list[type[SignoffError]]:
    """Every subclass of SignoffError, wherever in the engine package it is defined."""
    # Importing each module defines the errors outside signoff.errors too.
    for module in pkgutil.walk_packages(signoff.__path__, prefix="signoff."):
        importlib.import_module(module.name)
    found: list[type[SignoffError]] = []
    todo = list(SignoffError.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted(set(found), key=lambda cls: cls.__qualname__)


ERRORS = _every_error()


def _row(cls: type[BaseException]) -> type[BaseException]:
    """The table row ``status_of`` answers from for ``cls``."""
    return next(base for base in cls.__mro__ if base in STATUS)


def test_the_walk_finds_the_errors() -> None:
    # guards against a walk that finds nothing (and so can never fail)
    assert {InvalidSignature, SendFailed} <= set(ERRORS)
    assert len(ERRORS) > 20


@pytest.mark.parametrize("cls", ERRORS, ids=lambda cls: cls.__qualname__)
def test_every_error_has_a_status_of_its_own(cls: type[SignoffError]) -> None:
    # Only a bare SignoffError (dev tools) may fall to the catch-all 500.
    assert _row(cls) is not SignoffError, f"{cls.__qualname__} has no status; it falls to 500"
    status, code = status_of(cls.__new__(cls))
    assert 400 <= status < 600
    assert code != "internal_error"


@pytest.mark.parametrize("cls", ERRORS, ids=lambda cls: cls.__qualname__)
def test_every_error_is_in_one_family(cls: type[SignoffError]) -> None:
    if cls in FAMILIES:
        return
    families = [family for family in FAMILIES if issubclass(cls, family)]
    assert len(families) == 1, f"{cls.__qualname__} is in {families or 'no family'}"
    # A refinement stays inside its family: the row is the family or one of its members,
    # and a client error stays a client error (4xx), a server error a server error.
    (family,) = families
    assert issubclass(_row(cls), family)
    assert status_of(cls.__new__(cls))[0] // 100 == STATUS[family][0] // 100


def test_a_failed_signature_is_401_not_500() -> None:
    status, body = error_payload(InvalidSignature("Slack", "stale timestamp"))

    assert status == 401
    assert body["error"] == "unauthorized"
    assert "stale timestamp" not in body["detail"]


def test_a_failed_send_is_502_and_says_nothing_of_the_vendor() -> None:
    secret_url = "https://hooks.slack.com/services/T000/B000/XXXXXXXX"
    error = SendFailed("ops", f"ConnectError: cannot reach {secret_url}", retryable=True)

    status, body = error_payload(error)

    assert (status, body["error"]) == (502, "send_failed")
    assert "hooks.slack.com" not in str(body)
