"""An agent folder's ``hooks.py``: loading it, the run hooks' fire-and-forget contract,
and what ``tenant_for`` / ``session_id_for`` may see and return."""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from pathlib import Path

import pytest

from signoff.agents import hooks as hooks_module
from signoff.agents import load_agent
from signoff.agents.describe import describe_agent
from signoff.agents.hooks import Hooks, RunFinish, RunStart, load_hooks
from signoff.errors import ConfigError
from tests.support.hooks import agents_with_hooks

START = RunStart(
    agent="support",
    tenant="acme",
    session_id="s-1",
    channel="http",
    trigger="message",
    run_id="r-1",
)
FINISH = RunFinish(
    agent="support",
    tenant="acme",
    session_id="s-1",
    channel="schedule",
    text="done",
    stop_reason="denied",
    run_id="r-1",
)


def recording_source(tmp_path: Path) -> str:
    agents = agents_with_hooks(tmp_path / "copy", tmp_path / "log")
    return (agents / "customer-service" / "hooks.py").read_text()


def folder(tmp_path: Path, hooks: str) -> Path:
    agent = tmp_path / "support"
    agent.mkdir()
    (agent / "agent.yaml").write_text(
        "system: helpful\nmodel: {provider: scripted, script: script.yaml}\n"
    )
    (agent / "hooks.py").write_text(hooks)
    return agent


def test_an_agent_without_hooks_py_has_no_hooks(tmp_path: Path) -> None:
    agent = folder(tmp_path, "")
    (agent / "hooks.py").unlink()
    hooks = load_agent(agent).hooks
    assert hooks.on_run_start is None and hooks.tenant_for is None


def recording_hooks(tmp_path: Path) -> Hooks:
    agents = agents_with_hooks(tmp_path, tmp_path / "log")
    return load_hooks(agents / "customer-service" / "hooks.py", "customer-service")


def test_the_functions_of_hooks_py_become_the_agents_hooks(tmp_path: Path) -> None:
    hooks = load_agent(folder(tmp_path, recording_source(tmp_path))).hooks
    assert hooks.agent == "support"
    assert callable(hooks.on_run_start) and callable(hooks.on_run_finish)
    assert callable(hooks.tenant_for) and callable(hooks.session_id_for)


@pytest.mark.parametrize(
    ("name", "python"),
    [
        ("onRunStart", "on_run_start"),
        ("onRunFinish", "on_run_finish"),
        ("tenantFor", "tenant_for"),
        ("sessionIdFor", "session_id_for"),
    ],
)
def test_a_loopengine_name_is_refused_with_its_python_name(
    tmp_path: Path, name: str, python: str
) -> None:
    agent = folder(tmp_path, f"def {name}(ctx):\n    pass\n")
    with pytest.raises(ConfigError) as refused:
        load_agent(agent)
    assert refused.value.field == name and python in refused.value.problem
    assert refused.value.file.endswith("hooks.py")


def test_a_hook_that_is_not_a_function_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as refused:
        load_agent(folder(tmp_path, "on_run_finish = 'https://example.com/hook'\n"))
    assert refused.value.field == "on_run_finish"


def test_a_hooks_py_that_does_not_import_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as refused:
        load_agent(folder(tmp_path, "import not_a_module_anywhere\n"))
    assert "import failed" in refused.value.problem and refused.value.file.endswith("hooks.py")


def test_the_context_reads_by_python_and_by_the_seeds_names() -> None:
    assert (START.session_id, START.sessionId) == ("s-1", "s-1")
    assert (FINISH.stop_reason, FINISH.stopReason) == ("denied", "denied")
    with pytest.raises(AttributeError):
        START.tenant = "other"  # type: ignore[misc]


def test_a_failing_hook_is_logged_with_agent_and_hook_and_raises_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(ctx: RunFinish) -> None:
        raise RuntimeError("webhook down")

    hooks = Hooks(agent="support", on_run_finish=broken)
    with caplog.at_level(logging.WARNING, logger="signoff.agents.hooks"):
        fired = hooks.run_finished(FINISH)
        assert fired is not None and fired.wait()
    (record,) = caplog.records
    assert "on_run_finish" in record.getMessage() and "support" in record.getMessage()
    assert "webhook down" in record.getMessage()
    assert record.__dict__["agent"] == "support" and record.__dict__["hook"] == "on_run_finish"


def test_an_async_hook_is_awaited_and_its_failure_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[str] = []

    async def announce(ctx: RunStart) -> None:
        await asyncio.sleep(0)
        seen.append(ctx.sessionId)
        raise ValueError("rejected later")

    with caplog.at_level(logging.WARNING, logger="signoff.agents.hooks"):
        fired = Hooks(agent="support", on_run_start=announce).run_started(START)
        assert fired is not None and fired.wait()
    assert seen == ["s-1"]
    assert "rejected later" in caplog.records[0].getMessage()


def test_a_slow_hook_holds_the_caller_no_longer_than_the_bound(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(hooks_module, "HOOK_WAIT", 0.3)
    release = threading.Event()
    # The hook ends when released below, or by itself after a minute: a caller held until
    # the hook ends sees it end (True); one held only for the bound goes on while it runs.
    hooks = Hooks(agent="support", on_run_finish=lambda ctx: release.wait(60))
    try:
        with caplog.at_level(logging.WARNING, logger="signoff.agents.hooks"):
            fired = hooks.run_finished(FINISH)
            assert fired is not None
            assert fired.wait() is False, "the bound ended the wait, not the hook"
    finally:
        release.set()
    assert "still runs after 0.3s" in caplog.records[0].getMessage()


def test_tenant_for_sees_only_the_verified_tenant_and_key_id() -> None:
    seen: list[dict[str, str]] = []

    def tenant_for(headers: dict[str, str]) -> None:
        seen.append(dict(headers))

    hooks = Hooks(agent="support", tenant_for=tenant_for)
    assert hooks.tenant("acme", "sk_abc12345") == "acme"
    assert hooks.tenant("default", None) == "default"
    assert seen == [
        {"x-signoff-tenant": "acme", "x-signoff-key-id": "sk_abc12345"},
        {"x-signoff-tenant": "default"},
    ]


def test_tenant_for_may_map_the_verified_tenant(tmp_path: Path) -> None:
    hooks = recording_hooks(tmp_path)
    assert hooks.tenant("acme", "sk_abc12345") == "acme-eu"
    assert hooks.tenant("globex", "sk_def67890") == "globex"


@pytest.mark.parametrize("returned", ["acme/production", "", 42, "x" * 129])
def test_tenant_for_returning_no_tenant_fails_closed(returned: object) -> None:
    hooks = Hooks(agent="support", file="hooks.py", tenant_for=lambda headers: returned)  # type: ignore[arg-type,return-value]
    with pytest.raises(ConfigError) as refused:
        hooks.tenant("acme", None)
    assert refused.value.field == "tenant_for"


def test_tenant_for_raising_fails_closed() -> None:
    def tenant_for(headers: object) -> str:
        raise KeyError("authorization")

    with pytest.raises(ConfigError) as refused:
        Hooks(agent="support", file="hooks.py", tenant_for=tenant_for).tenant("acme", None)  # type: ignore[arg-type]
    assert "KeyError" in refused.value.problem


def test_session_id_for_picks_from_the_body_or_leaves_it_to_the_defaults(tmp_path: Path) -> None:
    hooks = recording_hooks(tmp_path)
    assert hooks.session_id({"message": "hi", "orderId": "A-1001"}) == "order-A-1001"
    assert hooks.session_id({"message": "hi", "sessionId": "s-1"}) is None


def test_session_id_for_returning_no_session_id_is_a_config_error() -> None:
    hooks = Hooks(agent="support", file="hooks.py", session_id_for=lambda body: "has spaces")
    with pytest.raises(ConfigError) as refused:
        hooks.session_id({"message": "hi"})
    assert refused.value.field == "session_id_for"


def test_the_documented_example_loads_and_maps_as_the_page_says(tmp_path: Path) -> None:
    page = (Path(__file__).resolve().parents[3] / "docs" / "hooks.md").read_text()
    example = re.search(r"```python\n(.*?)```", page, re.DOTALL)
    assert example is not None
    hooks = load_agent(folder(tmp_path, example.group(1))).hooks

    assert hooks.tenant("acme", "sk_abc12345") == "acme-eu"
    assert hooks.tenant("globex", None) == "globex"
    assert hooks.session_id({"message": "hi", "orderId": "A-1001"}) == "order-A-1001"
    assert hooks.session_id({"message": "hi"}) is None
    assert callable(hooks.on_run_start) and callable(hooks.on_run_finish)


def test_the_config_view_says_which_hooks_are_the_agents_own(tmp_path: Path) -> None:
    agent = load_agent(folder(tmp_path, "def tenant_for(headers):\n    return None\n"))

    assert describe_agent(agent)["hooks"] == {
        "onRunStart": False,
        "onRunFinish": False,
        "tenantFor": True,
        "sessionIdFor": False,
    }
