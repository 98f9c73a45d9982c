"""people.yaml: one person whatever channel they decide through, and the checks of a
rule's ``from`` / ``approvals`` against it when the agents load (``signoff check``)."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from signoff.agents import AgentCatalog
from signoff.approver.actors import LINK, api_caller, chat_user, inbox_approver, link_recipient
from signoff.errors import ConfigError
from signoff.gate.people import People, load_people
from tests.conftest import ROOT

if TYPE_CHECKING:
    from pathlib import Path

PEOPLE: dict[str, Any] = {
    "people": {
        "alice": {
            "email": "Alice@Example.com",
            "slack": "U0ALICE",
            "lark": "ou_alice",
            "apiKeys": ["k-alice"],
        },
        "bob": {"email": "bob@example.com", "slack": "U0BOB"},
    },
    "groups": {"finance-leads": ["alice", "bob"]},
}
RULE = "refund-production-needs-approval"


def test_every_identity_of_a_person_is_that_person() -> None:
    people = People.model_validate(PEOPLE)

    assert {
        people.person_of(actor.identity)
        for actor in (
            chat_user("slack", "U0ALICE", "ops-slack"),
            chat_user("lark", "ou_alice", "ops-lark"),
            link_recipient("alice@example.com", "mail"),
            api_caller("k-alice", "acme"),
            inbox_approver("ALICE@example.com"),
            inbox_approver("alice"),
        )
    } == {"alice"}
    assert people.person_of(chat_user("slack", "U0BOB", "ops-slack").identity) == "bob"
    # nobody in the directory: nobody's
    assert people.person_of(chat_user("slack", "U0DAVE", "ops-slack").identity) is None
    assert people.person_of(api_caller("k-other", "acme").identity) is None
    assert people.expand(["finance-leads", "carol"]) == {"alice", "bob", "carol"}


def test_an_identity_is_looked_up_by_its_kind_never_by_what_its_text_reads_as() -> None:
    people = People.model_validate(
        {**PEOPLE, "people": {**PEOPLE["people"], "link": {"email": "link@example.com"}}}
    )

    # a Lark open id equal to alice's Slack id is not alice
    assert people.person_of(chat_user("lark", "U0ALICE", "ops-lark").identity) is None
    # an address shaped like an API key identity is an address
    assert people.person_of(link_recipient("apikey:k-alice@acme.com", "mail").identity) is None
    # a Slack user whose id is a person's name is not that person
    assert people.person_of(chat_user("slack", "bob", "ops-slack").identity) is None
    # a link that names nobody is nobody, even beside a person called "link"
    assert people.person_of(LINK.identity) is None
    assert people.person_of(api_caller(None, "acme").identity) is None


@pytest.mark.parametrize("name", ["bob@example.com", "apikey:k-bob"])
def test_a_name_that_reads_as_an_address_or_a_key_is_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / "people.yaml"
    path.write_text(yaml.safe_dump({"people": {name: {"slack": "U0BOB"}}}))

    with pytest.raises(ConfigError, match="a person's or group's name has no '@' or ':'"):
        load_people(path)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            {"people": {"alice": {}}, "groups": {"leads": ["alice", "zoe"]}},
            "groups.leads: no person named zoe",
        ),
        (
            {"people": {"a": {"slack": "U1"}, "b": {"slack": "U1"}}},
            "people.b: U1 is a's too",
        ),
        ({"people": {"a": {"phone": "1"}}}, "people.a.phone"),
    ],
)
def test_an_inconsistent_directory_is_refused(
    tmp_path: Path, change: dict[str, Any], problem: str
) -> None:
    path = tmp_path / "people.yaml"
    path.write_text(yaml.safe_dump(change))

    with pytest.raises(ConfigError) as refused:
        load_people(path)

    assert problem in str(refused.value)


def test_no_people_yaml_is_an_empty_directory(tmp_path: Path) -> None:
    assert load_people(tmp_path / "people.yaml") == People()


def _agents(tmp_path: Path, rule: dict[str, Any], people: str | None) -> AgentCatalog:
    root = tmp_path / "agents"
    shutil.copytree(ROOT / "agents", root, ignore=shutil.ignore_patterns("__pycache__"))
    rules_file = root / "customer-service" / "actauth.yml"
    rules = yaml.safe_load(rules_file.read_text())
    [asking] = [r for r in rules["rules"] if r.get("name") == RULE]
    asking.update(rule)
    rules_file.write_text(yaml.safe_dump(rules))
    if people is not None:
        (root / "people.yaml").write_text(people)
    return AgentCatalog(root)


def test_a_rule_naming_nobody_known_is_a_problem_of_its_agent(tmp_path: Path) -> None:
    catalog = _agents(
        tmp_path, {"approvals": 2, "from": ["finance-leads", "zoe"]}, yaml.safe_dump(PEOPLE)
    )

    problems = catalog.problems()

    assert list(problems) == ["customer-service"]
    assert problems["customer-service"].field == f"rules.{RULE}.from"
    assert "no person or group named zoe in people.yaml" in str(problems["customer-service"])


def test_a_quorum_the_named_people_cannot_reach_is_a_problem(tmp_path: Path) -> None:
    catalog = _agents(tmp_path, {"approvals": 3, "from": "finance-leads"}, yaml.safe_dump(PEOPLE))

    problem = catalog.problems()["customer-service"]

    assert "needs 3 different people and 'from' names only 2" in str(problem)


def test_a_broken_directory_breaks_only_agents_whose_rules_count_people(tmp_path: Path) -> None:
    # an unreadable people.yaml breaks no agent that does not need it
    catalog = _agents(tmp_path, {}, "people: [not, a, mapping]")
    assert catalog.problems() == {}
    assert catalog.get("customer-service").people is None

    counted = _agents(tmp_path / "two", {"approvals": 2}, yaml.safe_dump(PEOPLE))
    assert counted.get("customer-service").people == People.model_validate(PEOPLE)
    # a valid directory is read for every agent: an item paused before a rules change
    # keeps counting a person once
    plain = _agents(tmp_path / "three", {}, yaml.safe_dump(PEOPLE))
    assert plain.get("customer-service").people == People.model_validate(PEOPLE)
