"""``signoff rules replay``: what a rules change would have decided differently, over real history.

::

    signoff rules replay <agent> --rules new-actauth.yml [--since 7d] [--tenant T] [--json]

Reads the tool calls the gate decided for the agent from the store (the table
named by ``SIGNOFF_TABLE`` through the normal AWS credentials, or the local
stack's with ``AWS_ENDPOINT_URL``, as ``signoff keys`` does), decides each again
with the new rules (``signoff.approvals.replay``) and prints the decisions that would
change, counted per (old decision and rule → new decision and rule), with
examples. The old decision is the recorded one.

Exit codes: 0 nothing would become less guarded, 1 some call would (deny > ask >
allow: a call that was asked about and would now be allowed, …), so a CI step
holds such a change for review; 2 a usage error (a rules file that does not
load, printed ``file:line: field: problem`` as ``signoff check`` prints it; a bad
``--since``; no table named).
"""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final

from signoff.approvals.inbox import parse_moment
from signoff.errors import BadInput, ConfigError, UsageError
from signoff_dev.cli.style import style_for
from signoff_dev.lines import located

if TYPE_CHECKING:
    import argparse

    from signoff.approvals.replay import Replay
    from signoff.store.dynamodb import DynamoStore

__all__ = ["parse_since", "register"]

EXIT_OK, EXIT_LESS_GUARDED, EXIT_USAGE = 0, 1, 2
EXAMPLES: Final = 3


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``rules`` command and its ``replay`` subcommand to the ``signoff`` parser."""
    rules = commands.add_parser("rules", help="replay a rules change over recorded tool calls")
    actions = rules.add_subparsers(required=True, metavar="action")
    replay = actions.add_parser(
        "replay",
        help="which recorded gate decisions new rules would change; exit 1 if any call "
        "would become less guarded (deny > ask > allow), 2 on a usage error",
        description="Decide every tool call the gate decided for AGENT again with the new "
        "rules, and list the decisions that would change. Reads the table named by "
        "SIGNOFF_TABLE (AWS_ENDPOINT_URL: a local emulator, e.g. `signoff dev`'s). "
        "Exit 0: nothing becomes less guarded; 1: a call would (deny > ask > allow); "
        "2: a usage error (a rules file that does not load, a bad --since).",
    )
    replay.add_argument("agent", metavar="AGENT", help="the agent whose history to replay")
    replay.add_argument(
        "--rules", required=True, type=Path, help="the new actauth.yml to decide with"
    )
    replay.add_argument(
        "--since",
        default="7d",
        help="how far back: a duration (90m, 24h, 7d, 2w) or an ISO date-time (default: 7d)",
    )
    replay.add_argument("--tenant", default=None, help="only this tenant's calls")
    replay.add_argument(
        "--examples",
        type=int,
        default=None,
        help=f"changed calls shown per kind of change (default: {EXAMPLES}); "
        "with --json, every change unless given",
    )
    replay.add_argument("--json", action="store_true", help="print one JSON document")
    replay.set_defaults(command=_replay)


def parse_since(text: str, now: float) -> float:
    """``7d`` (before ``now``), an ISO date-time (UTC unless it says) or epoch seconds.

    The inbox's reading of a moment (``signoff.approvals.inbox.parse_moment``), so ``--since``
    means the same here, in ``signoff audit`` and on ``GET /inbox``.

    Raises:
        UsageError: none of those.
    """
    problem = (
        f"--since {text!r}: give a duration (90m, 24h, 7d, 2w), an ISO date-time or epoch seconds"
    )
    try:
        moment = parse_moment(text, now, field="--since")
    except BadInput as exc:
        raise UsageError(problem) from exc
    if moment is None:
        raise UsageError(problem)
    return moment


def _store() -> DynamoStore:
    if not os.environ.get("SIGNOFF_TABLE"):
        raise UsageError(
            "SIGNOFF_TABLE is not set: name the DynamoDB table that holds the sessions "
            "(and set AWS_ENDPOINT_URL to use a local endpoint, e.g. `signoff dev`'s)"
        )
    from signoff.store.dynamodb import DynamoStore

    # The bucket is used when SIGNOFF_BUCKET names it: a log chunk too large for one
    # item keeps its body there.
    return DynamoStore.from_env(need_bucket=False)


def _replay(args: argparse.Namespace) -> int:
    from signoff.approvals.replay import replay_rules
    from signoff.gate import load_rules

    try:
        rules = load_rules(args.rules, args.agent)
    except ConfigError as problem:
        text = located(problem.file, problem.field, problem.problem)
        print(f"signoff rules replay: {text}", file=sys.stderr)
        return EXIT_USAGE
    if args.examples is not None and args.examples < 0:
        raise UsageError("--examples: a number of changes, 0 or more")
    now = time.time()
    since = parse_since(args.since, now)
    if since >= now:
        raise UsageError(f"--since {args.since!r} is not in the past")
    store = _store()
    replay = replay_rules(
        store.sessions,
        store.pending,
        args.agent,
        rules,
        since=since,
        until=now,
        tenant=args.tenant,
    )
    if args.json:
        document = replay.to_json(examples=args.examples)
        document["rules"] = str(args.rules)
        print(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        examples = EXAMPLES if args.examples is None else args.examples
        _print(replay, args.rules, examples)
    return EXIT_LESS_GUARDED if replay.less_guarded else EXIT_OK


def _when(epoch: float) -> str:
    return f"{datetime.fromtimestamp(epoch, UTC):%Y-%m-%d %H:%M:%S} UTC"


def _rule(name: str | None) -> str:
    return "default" if name is None else f"'{name}'"


def _print(replay: Replay, rules: Path, examples: int) -> None:
    paint = style_for(sys.stdout)
    who = f" of tenant {replay.tenant}" if replay.tenant else ""
    print(
        f"{replay.agent}{who}: {replay.calls} recorded call(s) from {_when(replay.since)} "
        f"to {_when(replay.until)}, decided again with {rules}"
    )
    if replay.unmatched:
        print(f"  {replay.unmatched} recorded decision(s) without their call in the log: skipped")
    if not replay.changes:
        print("no decision would change")
        return
    less = len(replay.less_guarded)
    summary = f"{len(replay.changes)} decision(s) would change, {less} less guarded"
    print(paint(summary, "red") if less else summary)
    for transition in replay.transitions:
        mark = "!" if transition.less_guarded else " "
        line = (
            f"{mark} {transition.old:>6} → {transition.new:<6} {transition.count:>6}  "
            f"{_rule(transition.old_rule)} → {_rule(transition.new_rule)}"
        )
        print(paint(line, "red") if transition.less_guarded else line)
        for change in replay.examples(transition)[:examples]:
            call = change.call
            print(
                f"      {_when(call.at)}  session {call.session_id}  "
                f"{call.tenant}/{call.environment}  {call.summary}"
            )
