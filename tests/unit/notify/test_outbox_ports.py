"""The outbox's ports, split by who calls them: each small, each caller typed by its own.

``Outbox`` is every narrow port at once (what ``TableOutbox`` implements); a method
added to it but to none of the narrow ports, or a caller that takes the whole outbox
again, fails here. That the adapter matches each port, method by method, is the
contract suite's (``tests/contract/store/test_outbox_contract.py``); mypy checks the wiring.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

import pytest

from signoff.api.context import Api
from signoff.durable.decide import not_sent_to
from signoff.durable.escalation import Escalator
from signoff.durable.sweeper import Sweeper
from signoff.notify.hub import Notifier
from signoff.store.base import (
    NotifierOutbox,
    OperatorOutbox,
    Outbox,
    OutboxRedrive,
    OutboxRows,
    OutboxWriter,
    SweeperOutbox,
)
from signoff.store.outbox import TableOutbox

if TYPE_CHECKING:
    from collections.abc import Callable

NARROW: tuple[type, ...] = (
    OutboxRows,
    OutboxWriter,
    OutboxRedrive,
    NotifierOutbox,
    SweeperOutbox,
    OperatorOutbox,
)


def methods(port: type) -> set[str]:
    """The methods a protocol declares, its bases' included."""
    return {
        name
        for klass in port.__mro__
        if klass not in (object,) and getattr(klass, "_is_protocol", False)
        for name, value in vars(klass).items()
        if inspect.isfunction(value) and not name.startswith("_")
    }


@pytest.mark.parametrize("port", NARROW, ids=[port.__name__ for port in NARROW])
def test_each_narrow_port_has_one_to_six_methods(port: type) -> None:
    assert 1 <= len(methods(port)) <= 6, sorted(methods(port))


def test_the_outbox_is_the_narrow_ports_together_and_nothing_more() -> None:
    assert set().union(*(methods(port) for port in NARROW)) == methods(Outbox)
    assert len(methods(Outbox)) == 13
    assert methods(Outbox) <= {name for name in dir(TableOutbox) if not name.startswith("_")}


@pytest.mark.parametrize(
    ("caller", "parameter", "port"),
    [
        (Notifier.__init__, "outbox", NotifierOutbox),
        (Sweeper.__init__, "outbox", SweeperOutbox),
        (Escalator.__init__, "outbox", OutboxWriter),
        (not_sent_to, "outbox", OutboxRows),
    ],
    ids=["notifier", "sweeper", "escalation ladder", "decision path"],
)
def test_each_caller_takes_its_own_port(
    caller: Callable[..., object], parameter: str, port: type
) -> None:
    # ``from __future__ import annotations``: the annotation is the port's name
    assert inspect.signature(caller).parameters[parameter].annotation == port.__name__


def test_the_api_keeps_the_rows_it_reads() -> None:
    assert Api.__annotations__["outbox"] == OutboxRows.__name__


def test_the_outbox_command_uses_the_operators_port() -> None:
    from signoff_dev.cli import outbox as command

    source = inspect.getsource(command)
    assert source.count("outbox: OperatorOutbox = ") == 2  # ``list`` and ``retry``
    assert "store.outbox." not in source
