"""One meaning per flag: every ``signoff`` command's parser, walked.

A flag that takes an optional value (``nargs="?"``, ``"*"``, ``"+"``) on a command with
positionals swallows the positional after it: ``signoff send … --deny "message"`` read
the message as the deny's reason. And a flag spelled the same on two commands must
take the same kind of value on both, or the habit of one breaks the other.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

import pytest

from signoff.errors import UsageError
from signoff_dev.cli.main import _parser
from signoff_dev.cli.options import flag_decision

if TYPE_CHECKING:
    from collections.abc import Iterator

VARIABLE = ("?", "*", "+")


def commands(
    parser: argparse.ArgumentParser, name: str = "signoff"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``parser`` and every subcommand's parser under it, by their command line."""
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, child in action.choices.items():
                yield from commands(child, f"{name} {sub}")


COMMANDS = dict(commands(_parser()))


def flags(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.option_strings and a.help != argparse.SUPPRESS]


def positionals(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if not a.option_strings]


def test_the_walk_finds_every_command() -> None:
    assert {"signoff run", "signoff send", "signoff check", "signoff demo"} <= set(COMMANDS)
    assert len(COMMANDS) > 15


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_flag_takes_an_optional_value_before_a_positional(name: str) -> None:
    parser = COMMANDS[name]
    if not positionals(parser):
        return
    swallowing = [
        "/".join(action.option_strings) for action in flags(parser) if action.nargs in VARIABLE
    ]
    assert swallowing == [], f"{name}: {swallowing} would take the positional after it"


def _shape(action: argparse.Action) -> tuple[object, ...]:
    """What a flag does with what follows it: its action, arity, constant and choices."""
    return (type(action).__name__, action.nargs, action.const, action.choices)


def test_a_flag_means_the_same_on_every_command() -> None:
    shapes: dict[str, dict[tuple[object, ...], list[str]]] = {}
    for name, parser in COMMANDS.items():
        for action in flags(parser):
            for option in action.option_strings:
                shapes.setdefault(option, {}).setdefault(_shape(action), []).append(name)
    differing = {option: found for option, found in shapes.items() if len(found) > 1}
    assert differing == {}


def test_deny_is_a_switch_and_the_reason_its_own_option() -> None:
    for name in ("signoff run", "signoff send"):
        parser = COMMANDS[name]
        base = ["customer-service"] + (["--url", "http://x"] if name.endswith("send") else [])
        args = parser.parse_args([*base, "--deny", "refund A-1001"])
        assert (args.decision, args.message, args.reason) == ("deny", "refund A-1001", None)
        args = parser.parse_args([*base, "--deny", "--reason", "wrong order", "refund A-1001"])
        assert (args.decision, args.message, args.reason) == (
            "deny",
            "refund A-1001",
            "wrong order",
        )
        assert flag_decision(args) == "deny"
        args = parser.parse_args([*base, "--reason", "why", "refund A-1001"])
        with pytest.raises(UsageError, match="--reason"):
            flag_decision(args)
