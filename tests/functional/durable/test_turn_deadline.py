"""Turns that fit their function's time, over real sockets: a model call is cut at the
invocation's deadline and the turn continues in a fresh one; a turn killed mid-model-call
(SIGKILL) frees its session when its lease (the function's timeout plus a margin) runs out.

What is timed is told apart by a wide margin, never by how fast this machine is: a call
that was not cut takes the model's whole ``SLOW`` reply, so an answer in less than half
of it was cut. How close to the deadline the cut falls is counted on a fake clock
(tests/unit/models/test_model_deadline.py), and that a turn keeps the API's safety margin
clear without timing it (tests/functional/api/test_handlers.py, a turn with only the
margin left). The lease is read from the dead turn's claim and tried on a clock set
either side of its end.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest

from signoff.clock import ManualClock
from signoff.errors import SessionBusy
from tests.conftest import ROOT
from tests.support.aws import moto_server as moto_server
from tests.support.http_server import RecordingServer, Reply
from tests.support.lambdas import Lambdas, body, load_event
from tests.support.lambdas import lambdas as lambdas
from tests.support.turn_child import deployed_turns

if TYPE_CHECKING:
    from collections.abc import Iterator

AGENTS = ROOT / "tests" / "fixtures" / "agents"
LEASE_SECONDS = 3.0
SLOW = 60.0  # longer than any test waits: only a cut or a kill ends such a call


def completion(text: str) -> dict[str, object]:
    return {
        "choices": [{"message": {"content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2},
    }


@pytest.fixture
def model_server() -> Iterator[RecordingServer]:
    with RecordingServer() as server:
        yield server


@pytest.fixture
def deployment(
    moto_server: dict[str, str], model_server: RecordingServer, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """The functions' environment: every agent on the local model, a short session lease."""
    env = {
        **moto_server,
        "SIGNOFF_AGENTS_DIR": str(AGENTS),
        "SIGNOFF_MODEL": "openai:slow-model",
        "SIGNOFF_MODEL_BASE_URL": f"{model_server.url}/v1",
        # a function of 2 s whose turns hold their session for 3 s (the template's
        # SessionLeaseMs; derived, it would be the timeout plus 30 s)
        "SIGNOFF_FUNCTION_TIMEOUT": "2",
        "SIGNOFF_CLAIM_TTL_MS": str(int(LEASE_SECONDS * 1000)),
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def test_a_model_call_is_cut_at_the_deadline_and_a_fresh_invocation_makes_it(
    deployment: dict[str, str], model_server: RecordingServer
) -> None:
    model_server.script(
        [Reply(json=completion("too late"), delay=SLOW), Reply(json=completion("hello"))]
    )
    turns = deployed_turns()

    started = time.monotonic()
    first = turns.send("crashy", "hi", tenant="t", environment="e", deadline=time.monotonic() + 1.5)
    took = time.monotonic() - started

    assert first.status == "running"
    assert took < SLOW / 2, f"the call was not cut at the invocation's deadline ({took:.1f} s)"
    # the continuation: a fresh invocation with its whole time
    done = deployed_turns().proceed(first.session_id, deadline=time.monotonic() + 30)
    assert done.status == "finished"
    assert done.text == "hello"
    assert len(model_server.requests) == 2


def test_a_turn_killed_mid_model_call_frees_its_session_within_the_lease(
    deployment: dict[str, str], model_server: RecordingServer
) -> None:
    model_server.script([Reply(json=completion("never read"), delay=SLOW)])
    spawned = time.time()
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.support.turn_child", "crashy", "s-killed", "hi"],
        cwd=ROOT,
        env={**os.environ, **deployment},
    )
    try:
        waited = time.monotonic() + 60
        while not model_server.requests:
            assert child.poll() is None, "the child ended before its model call"
            assert time.monotonic() < waited, "the model was never called"
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
        killed = time.time()
    finally:
        assert child.wait(timeout=30) == -signal.SIGKILL
    model_server.script([Reply(json=completion("back again"))])

    # The dead turn still holds the session, on the lease its claim took: LEASE_SECONDS
    # (SIGNOFF_CLAIM_TTL_MS) from a moment between its start and its death
    held = deployed_turns().sessions.load("s-killed")
    assert held is not None and held.lease_owner is not None and held.lease_until is not None
    assert spawned + LEASE_SECONDS <= held.lease_until <= killed + LEASE_SECONDS
    # A message just before the lease runs out is refused, one just after takes the
    # session (a clock set either side of it: how soon this machine gets there is no matter)
    clock = ManualClock(datetime.fromtimestamp(held.lease_until - 0.5, UTC))
    turns = deployed_turns(clock)
    with pytest.raises(SessionBusy):  # the dead turn's lease is still live
        turns.send("crashy", "again", tenant="t", environment="e", session_id="s-killed")
    clock.advance(1.0)
    result = turns.send("crashy", "again", tenant="t", environment="e", session_id="s-killed")

    assert result.status == "finished"
    assert result.text == "back again"


@pytest.fixture
def model_everywhere(model_server: RecordingServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every agent on the local model: set before the functions' cold start reads it."""
    monkeypatch.setenv("SIGNOFF_MODEL", "openai:slow-model")
    monkeypatch.setenv("SIGNOFF_MODEL_BASE_URL", f"{model_server.url}/v1")


def test_an_http_message_whose_model_is_slow_answers_202_running_in_time_and_continues(
    model_everywhere: None, lambdas: Lambdas, model_server: RecordingServer
) -> None:
    model_server.script(
        [Reply(json=completion("too late"), delay=SLOW), Reply(json=completion("hello"))]
    )

    started = time.monotonic()
    # 8 s left in the invocation: the turn must answer before, whatever the model does
    response = lambdas.invoke("message", load_event("message_post"), remaining_ms=8_000)
    took = time.monotonic() - started

    assert response["statusCode"] == 202, response["body"]
    running = body(response)
    assert running["type"] == "running"
    assert running["statusUrl"]  # where the client polls while the continuation runs
    # Cut at the invocation's deadline: a call that was not cut would answer after SLOW s
    assert took < SLOW / 2, f"the model call was not cut ({took:.1f} s)"
    session_id = running["sessionId"]
    assert lambdas.continuations.drain() == [session_id]
    # the continuation: the message function again, with its whole time
    done = lambdas.invoke("message", load_event("continue_turn", SESSION_ID=session_id))
    assert done == {"sessionId": session_id, "status": "finished"}
    assert lambdas.api.turns.sessions.load(session_id).status == "done"
