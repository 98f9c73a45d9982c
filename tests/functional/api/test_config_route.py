"""``GET /agents/config``: the config page of a deployment's agents, behind its API key.

The resolve function on moto, deployed without anonymous callers, with the sample
agents, one broken agent and one whose model key comes from an environment variable.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import time
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from signoff.keys.api_keys import new_api_key
from signoff.web import PAGE_HEADERS
from signoff.web.config_html import CONFIG_HEADERS
from tests.conftest import ROOT
from tests.support.aws import aws as aws
from tests.support.lambdas import FakeLambdaContext, body, deployed_at, import_handler, load_event

if TYPE_CHECKING:
    from pathlib import Path
    from types import ModuleType

    from tests.support.aws import AwsResources

MODEL_KEY = "sk-live-do-not-show-0123456789"


@dataclasses.dataclass(frozen=True)
class Deployment:
    resolve: ModuleType
    key: str
    agents: Path

    def get(self, query: dict[str, str] | None = None, key: str | None = None) -> dict[str, Any]:
        event = load_event("agent_config_page")
        event["queryStringParameters"] = query
        event["rawQueryString"] = "&".join(f"{k}={v}" for k, v in (query or {}).items())
        if key is not None:
            event["headers"]["x-api-key"] = key
        result: dict[str, Any] = self.resolve.handler(event, FakeLambdaContext())
        return result


@pytest.fixture
def deployment(aws: AwsResources, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Deployment:
    agents = tmp_path / "agents"
    shutil.copytree(ROOT / "agents", agents)
    # an agent whose provider key is read from the environment: the page names the variable
    keyed = agents / "keyed"
    shutil.copytree(agents / "daily-digest", keyed)
    config = yaml.safe_load((keyed / "agent.yaml").read_text())
    config["model"] = {"provider": "openai", "model": "gpt-4o-mini", "apiKeyEnv": "SHOP_AI_KEY"}
    (keyed / "agent.yaml").write_text(yaml.safe_dump(config))
    monkeypatch.setenv("SHOP_AI_KEY", MODEL_KEY)
    broken = agents / "broken"
    broken.mkdir()
    (broken / "agent.yaml").write_text("system: x\nmaxTurns: many\n")
    deployed_at(monkeypatch, agents, anonymous=False)
    resolve = import_handler("resolve")
    clear, record = new_api_key("acme", "config page", time.time())
    resolve.API.api_keys.add(record)
    return Deployment(resolve, clear, agents)


class Headings(HTMLParser):
    """The page's ``<h2>`` texts: one per agent shown."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.h2: list[str] = []
        self._in = False
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in = tag == "h2"
        if self._in:
            self.h2.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in = False if tag == "h2" else self._in

    def handle_data(self, data: str) -> None:
        if self._in:
            self.h2[-1] += data


def test_the_page_shows_every_agent_to_a_caller_with_a_key(deployment: Deployment) -> None:
    response = deployment.get(key=deployment.key)

    assert response["statusCode"] == 200
    assert response["headers"] == CONFIG_HEADERS
    page = response["body"]
    assert Headings(page).h2 == ["broken", "customer-service", "daily-digest", "keyed"]
    # the rules as GET /agents/{name}/config has them: the file by the agents folder
    assert "customer-service/actauth.yml" in page and "daily-digest/actauth.yml" in page
    assert str(deployment.agents) not in page and str(ROOT) not in page
    # one broken agent hides none of the others, and what is wrong stays in the log
    broken = page.split('id="agent-broken"', 1)[1].split("</section>", 1)[0]
    assert "configuration does not load" in broken
    assert "maxTurns" not in broken and "many" not in broken
    # a key is named by where it comes from, never shown
    assert "SHOP_AI_KEY" in page and MODEL_KEY not in page
    assert "<script" not in page


def test_one_agent_is_the_json_routes_config_drawn(deployment: Deployment) -> None:
    response = deployment.get({"agent": "customer-service"}, key=deployment.key)

    assert response["statusCode"] == 200
    page = response["body"]
    assert Headings(page).h2 == ["customer-service"]
    event = load_event("agent_config")
    event["headers"]["x-api-key"] = deployment.key
    config = body(deployment.resolve.handler(event, FakeLambdaContext()))
    for tool in config["tools"]:
        assert f"<code>{tool['name']}</code>" in page
    for rule in config["rules"]["rules"]:
        assert rule["name"] in page
    assert page.count('class="rule"') == len(config["rules"]["rules"])
    assert page.count('class="tool"') == len(config["tools"])


def test_without_a_key_the_page_is_refused_with_a_page(deployment: Deployment) -> None:
    for key in (None, "sk_bogus"):
        response = deployment.get(key=key)

        assert response["statusCode"] == 401
        assert response["headers"] == PAGE_HEADERS
        assert "An API key is needed" in response["body"]
        assert "customer-service" not in response["body"], "nothing of the agents shown"


def test_an_unknown_agent_is_a_404_page(deployment: Deployment) -> None:
    response = deployment.get({"agent": "nobody"}, key=deployment.key)

    assert response["statusCode"] == 404
    assert response["headers"]["Content-Type"].startswith("text/html")
    assert re.search(r"unknown agent .*nobody", response["body"])


def test_the_json_route_shows_the_rules_file_by_its_folder_and_its_keys(
    deployment: Deployment,
) -> None:
    event = load_event("agent_config")
    event["headers"]["x-api-key"] = deployment.key
    config = body(deployment.resolve.handler(event, FakeLambdaContext()))

    assert config["rules"]["source"] == "customer-service/actauth.yml"
    assert str(deployment.agents) not in json.dumps(config)
    keys = {key for rule in config["rules"]["rules"] for key in rule}
    assert {"from", "denyQuorum"} <= keys and not {"from_", "deny_quorum"} & keys
