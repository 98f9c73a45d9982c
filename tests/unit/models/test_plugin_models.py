"""Model providers you install (issue 12): the ``signoff.models`` entry-point group.

A provider is installed as a third party would ship it (a distribution on
``sys.path`` declaring the entry point), named in an ``agent.yaml``, and a turn
is run through the public path: ``AgentCatalog`` loads the agent (validating its
``model.provider``), ``Turns`` runs the message with the model ``build_model``
builds, over the memory store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from signoff.agents.loader import AgentCatalog, load_agent
from signoff.clock import ManualClock
from signoff.durable.turns import Turns
from signoff.errors import ConfigError
from signoff.models.factory import build_model
from signoff.models.registry import PROVIDERS
from signoff.models.scripted import ScriptedModel
from signoff.queue.memory import MemoryQueue
from signoff.settings import Deployment
from signoff.store.memory import MemoryStore
from tests.support.distributions import install

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

PARROT = "tests.support.plugin_model:ParrotModel"
GROUP = "signoff.models"  # the documented group name, spelled out
BUILT_IN = ("scripted", "openai", "anthropic", "bedrock")


@pytest.fixture(autouse=True)
def _registry() -> Iterator[None]:
    # An installed provider joins PROVIDERS when first named; each test starts clean.
    before = dict(PROVIDERS)
    yield
    PROVIDERS.clear()
    PROVIDERS.update(before)


def agent(root: Path, provider: str, *, name: str = "parroting") -> Path:
    folder = root / "agents" / name
    folder.mkdir(parents=True)
    (folder / "agent.yaml").write_text(
        f"system: repeat after me\nmodel: {{provider: {provider}, model: polly}}\n"
    )
    (folder / "greeting.txt").write_text("squawk")
    return folder.parent


def turns(agents: Path) -> Turns:
    clock = ManualClock()
    store = MemoryStore(clock=clock)
    no_override = Deployment.model_validate({})
    return Turns(
        catalog=AgentCatalog(agents),
        sessions=store.sessions,
        pending=store.pending,
        audit=store.audit,
        queue=MemoryQueue(),
        clock=clock,
        model_for=lambda a: build_model(a.config.model, a.directory, no_override),
    )


def test_an_installed_provider_runs_an_agents_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path, monkeypatch, f"[{GROUP}]\nparrot = {PARROT}\n", name="parrot")
    agents = agent(tmp_path, "parrot")

    result = turns(agents).send("parroting", "hello there", tenant="t", environment="e")

    assert result.status == "finished"
    assert result.text == "squawk polly: hello there"  # its settings and its folder reached it


def test_an_installed_provider_joins_the_one_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path, monkeypatch, f"[{GROUP}]\nparrot = {PARROT}\n", name="parrot")

    load_agent(agent(tmp_path, "parrot") / "parroting")

    assert PROVIDERS["parrot"].adapter == PARROT
    assert PROVIDERS["parrot"].retried  # across a network, as far as signoff knows


def test_a_built_in_name_wins_over_an_installed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path, monkeypatch, f"[{GROUP}]\nscripted = {PARROT}\n", name="evil")
    folder = agent(tmp_path, "scripted") / "parroting"
    (folder / "script.yaml").write_text(
        "scenarios:\n  - match: ''\n    steps:\n      - text: scripted\n"
    )

    model = build_model(load_agent(folder).config.model, folder, Deployment.model_validate({}))

    assert isinstance(model, ScriptedModel)
    assert PROVIDERS["scripted"].adapter == "signoff.models.scripted:ScriptedModel"


def test_an_unknown_provider_fails_at_load_naming_file_field_and_built_ins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Installed plug-ins are searched, and one of another name does not match.
    install(tmp_path, monkeypatch, f"[{GROUP}]\nparrot = {PARROT}\n", name="parrot")
    folder = agent(tmp_path, "gpt") / "parroting"

    with pytest.raises(ConfigError) as caught:
        load_agent(folder)

    assert caught.value.file == str(folder / "agent.yaml")
    assert caught.value.field == "model.provider"
    assert all(repr(name) in caught.value.problem for name in BUILT_IN)
    assert GROUP in caught.value.problem
    assert "gpt" not in PROVIDERS


def test_signoff_model_may_name_an_installed_provider(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path, monkeypatch, f"[{GROUP}]\nparrot = {PARROT}\n", name="parrot")
    folder = agent(tmp_path, "scripted") / "parroting"
    override = Deployment.model_validate({"SIGNOFF_MODEL": "parrot:kea"})

    model = build_model(load_agent(folder).config.model, folder, override)

    from signoff.messages import ModelRequest, UserMessage

    reply = model(ModelRequest(system="", messages=(UserMessage(content="hi"),)))
    assert reply.text == "squawk kea: hi"
