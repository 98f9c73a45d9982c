"""docs/extending.md's worked examples, run: a provider and a channel added by one registry line.

The page's ``example:`` blocks are written to the files they name (inside
``signoff.models`` / ``signoff.channels``, through a temporary package path),
the registry lines are added, and the page's own tests are run. Around them:
what the registries promise — everything else derives from the table, and an
adapter is imported only when a configuration uses it.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING, Any

import pytest

import signoff.channels
import signoff.models
from signoff.aws.channels import channel_secret_names
from signoff.channels.config import ChannelsConfig, check_agent_notify, load_channels
from signoff.channels.registry import CHANNEL_TYPES, ChannelType
from signoff.errors import ConfigError
from signoff.models.registry import PROVIDERS, Provider
from signoff.plugins import module_of
from tests.conftest import ROOT

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

DOC = ROOT / "docs" / "extending.md"
_BLOCK = re.compile(r"<!-- example: (?P<what>[^>]+?) -->\n```python\n(?P<code>.*?)```", re.DOTALL)


def examples() -> dict[str, str]:
    return {m["what"]: m["code"] for m in _BLOCK.finditer(DOC.read_text(encoding="utf-8"))}


@pytest.fixture
def extended(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """The page's modules importable as ``signoff.models.echo`` / ``signoff.channels.jsonl``,
    and its registry lines added; all undone afterwards."""
    blocks = examples()
    for package in (signoff.models, signoff.channels):
        sub = package.__name__.removeprefix("signoff.")
        extra = tmp_path / "ext" / sub
        extra.mkdir(parents=True)
        for what, code in blocks.items():
            if what.startswith(f"signoff/{sub}/"):
                (extra / what.rsplit("/", 1)[1]).write_text(code, encoding="utf-8")
        monkeypatch.setattr(package, "__path__", [*package.__path__, str(extra)])
    for what, table, kind in (
        ("registry PROVIDERS", PROVIDERS, Provider),
        ("registry CHANNEL_TYPES", CHANNEL_TYPES, ChannelType),
    ):
        entries = eval("{" + blocks[what] + "}", {kind.__name__: kind})
        for key, entry in entries.items():
            monkeypatch.setitem(table, key, entry)
    yield blocks
    for package, module in ((signoff.models, "echo"), (signoff.channels, "jsonl")):
        sys.modules.pop(f"{package.__name__}.{module}", None)
        if hasattr(package, module):
            delattr(package, module)


def run_page_test(code: str, tmp_path: Path) -> None:
    namespace: dict[str, Any] = {}
    exec(compile(code, str(DOC), "exec"), namespace)
    tests = [value for name, value in namespace.items() if name.startswith("test_")]
    assert tests, "the page's test block defines no test"
    for test in tests:
        test(tmp_path)


def test_the_page_shows_each_example() -> None:
    assert set(examples()) == {
        "signoff/models/echo.py",
        "registry PROVIDERS",
        "test provider",
        "signoff/channels/jsonl.py",
        "registry CHANNEL_TYPES",
        "test channel",
    }


def test_the_pages_provider_works_from_its_registry_line(
    extended: dict[str, str], tmp_path: Path
) -> None:
    run_page_test(extended["test provider"], tmp_path)


def test_the_pages_channel_works_from_its_registry_line(
    extended: dict[str, str], tmp_path: Path
) -> None:
    run_page_test(extended["test channel"], tmp_path)


def test_an_added_provider_is_accepted_by_signoff_model(
    extended: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from signoff.messages import ModelRequest, UserMessage
    from signoff.models.factory import build_model
    from signoff.models.settings import ModelSettings

    monkeypatch.setenv("SIGNOFF_MODEL", "echo:override")

    model = build_model(ModelSettings(), tmp_path)

    reply = model(ModelRequest(system="", messages=(UserMessage(content="hi"),)))
    assert reply.text == "override: hi"


def test_an_unknown_provider_is_refused_with_the_registered_ones() -> None:
    from pydantic import ValidationError

    from signoff.models.settings import ModelSettings

    with pytest.raises(ValidationError) as caught:
        ModelSettings.model_validate({"provider": "gpt"})

    assert all(repr(name) in str(caught.value) for name in PROVIDERS)


def test_an_unknown_channel_type_lists_the_registered_ones(
    extended: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "channels.yaml").write_text("channels:\n  w: {type: pager}\n")

    with pytest.raises(ConfigError) as caught:
        load_channels(tmp_path / "channels.yaml")

    assert caught.value.field == "channels.w.type"
    assert "unknown channel type 'pager'" in caught.value.problem
    assert "jsonl" in caught.value.problem  # the added type, from the table


def test_an_added_type_settings_are_validated_by_its_model(
    extended: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "channels.yaml").write_text("channels:\n  f: {type: jsonl, path: ''}\n")

    with pytest.raises(ConfigError) as caught:
        load_channels(tmp_path / "channels.yaml")

    assert caught.value.field == "channels.f.path"
    assert "at least 1 character" in caught.value.problem


def test_approval_only_comes_from_the_registry_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extended: dict[str, str]
) -> None:
    jsonl = CHANNEL_TYPES["jsonl"]
    monkeypatch.setitem(
        CHANNEL_TYPES,
        "jsonl",
        ChannelType(channel=jsonl.channel, settings=jsonl.settings, approval_only=True),
    )
    config = ChannelsConfig.model_validate({"channels": {"f": {"type": "jsonl", "path": "x"}}})

    check_agent_notify("agent.yaml", {"f": ["approval"]}, config)
    with pytest.raises(ConfigError) as caught:
        check_agent_notify("agent.yaml", {"f": ["approval", "question"]}, config)

    assert "a jsonl channel only takes the 'approval' event, not question" in caught.value.problem


def test_a_types_secrets_are_found_in_its_own_fields() -> None:
    # the deployment reads every {secret: name} a channel's settings hold; the
    # config keeps each type's fields (not only those of ChannelSettings)
    config = ChannelsConfig.model_validate(
        {
            "channels": {
                "hook": {
                    "type": "webhook",
                    "url": "https://h.example.com",
                    "secret": {"secret": "a"},
                },
                "db": {"type": "database", "dsn": {"secret": "b"}},
            }
        }
    )

    assert channel_secret_names(config) == ["a", "b"]
    assert config.model_dump()["channels"]["db"]["table"] == "signoff_pending_approvals"


def _loaded_after(code: str) -> set[str]:
    """The signoff modules a fresh interpreter has loaded after running ``code``."""
    script = textwrap.dedent(code) + (
        "\nimport sys\nprint(' '.join(m for m in sys.modules if m.startswith('signoff.')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    return set(result.stdout.split())


def test_a_deployment_loads_only_the_channel_modules_it_configures(tmp_path: Path) -> None:
    (tmp_path / "channels.yaml").write_text(
        "channels:\n  hook: {type: webhook, url: 'https://h.example.com', secret: {secret: s}}\n"
    )

    loaded = _loaded_after(
        f"""
        from pathlib import Path
        from signoff.channels.config import load_channels
        from signoff.channels.build import build_channels
        from signoff.clock import ManualClock
        from signoff.secrets.memory import MemorySecrets
        config = load_channels(Path({str(tmp_path / "channels.yaml")!r}))
        build_channels(config, MemorySecrets(), clock=ManualClock())
        """
    )

    assert "signoff.channels.webhook" in loaded
    others = {f"signoff.channels.{t}" for t in CHANNEL_TYPES if t != "webhook"}
    assert loaded & others == set()


def test_validating_channels_yaml_imports_only_the_settings_models_of_its_types(
    tmp_path: Path,
) -> None:
    # Every function validates channels.yaml at cold start; only the notifier builds
    # channels. So validating one imports the settings models of the types it uses,
    # and neither the other types' models nor any channel class (nor its client).
    (tmp_path / "channels.yaml").write_text(
        "channels:\n  hook: {type: webhook, url: 'https://h.example.com', secret: {secret: s}}\n"
    )

    loaded = _loaded_after(
        f"""
        from pathlib import Path
        from signoff.channels.config import check_agent_notify, load_channels
        config = load_channels(Path({str(tmp_path / "channels.yaml")!r}))
        check_agent_notify("agent.yaml", {{"hook": ["approval"]}}, config)
        """
    )

    assert module_of(CHANNEL_TYPES["webhook"].settings) in loaded
    others = {module_of(kind.settings) for name, kind in CHANNEL_TYPES.items() if name != "webhook"}
    assert loaded & others == set()
    # (the plug-in builder's module is the loader's, which looks installed types up there)
    channels = {module_of(kind.channel) for name, kind in CHANNEL_TYPES.items() if name != "python"}
    assert loaded & channels == set()


def test_the_implicit_console_channel_imports_its_settings_when_named() -> None:
    loaded = _loaded_after(
        """
        import sys
        from signoff.channels.config import ChannelsConfig, check_agent_notify
        config = ChannelsConfig()
        assert "signoff.channels.settings.console" not in sys.modules
        check_agent_notify("agent.yaml", {"console": ["approval"]}, config)
        assert config.settings("console").type == "console"
        """
    )

    assert module_of(CHANNEL_TYPES["console"].settings) in loaded


def test_an_agent_loads_only_the_provider_it_names() -> None:
    agent_dir = ROOT / "agents" / "customer-service"  # a scripted agent

    loaded = _loaded_after(
        f"""
        from pathlib import Path
        from signoff.models.settings import ModelSettings
        from signoff.models.factory import build_model
        build_model(ModelSettings(), Path({str(agent_dir)!r}))
        """
    )

    assert "signoff.models.scripted" in loaded
    network = {f"signoff.models.{name}" for name in ("openai", "anthropic", "bedrock")}
    assert loaded & network == set()
