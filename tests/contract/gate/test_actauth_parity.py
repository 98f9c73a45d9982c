"""signoff's gate decides as actauth 0.0.4 does: a differential property test.

actauth (loopengine's rule engine, its Python reference, a dev-extra dependency) and
``signoff.gate`` load the same generated rule file (as the mapping YAML gives; the
file-level tests below read real files) and gate the same calls; the decision, the
reason and the matched rule's name must be equal. The files cover
scopes with literal, ``*`` and partial-glob segments in one-, two-, three- and
four-segment forms, rules without names, duplicate names, ignored keys, and
conditions with every operator, ``all`` / ``any`` nesting (empty groups and null
members too), dotted fields, missing ``value``s and values of every JSON type.

5,000 examples by default (about 30 s of one core); ``SIGNOFF_PARITY_EXAMPLES=50000``
runs a larger search.
"""

from __future__ import annotations

import itertools
import os
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import actauth
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from signoff.errors import ConfigError
from signoff.gate import RuleSet, Scope, decide, load_rules, rules_from
from tests.support.actauth_reference import actauth_decides

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = int(os.environ.get("SIGNOFF_PARITY_EXAMPLES", "5000"))

TENANTS = ["acme", "acme-eu", "globex", "a"]
ENVIRONMENTS = ["prod", "production", "staging"]
AGENTS = ["bot", "shop", "prod"]
TOOLS = ["lookup", "issue_refund", "send_email"]
OPS = ["eq", "ne", "gt", "gte", "lt", "lte", "in", "contains"]
FIELDS = ["amount", "currency", "tags", "flag", "customer", "customer.tier", "customer.x.y", "no"]

PARTIAL = ["acme-*", "a*", "*-eu", "?cme", "[ag]*", "prod*", "*ing", "s?aging", "[!s]*"]


def _segments(literals: list[str]) -> list[str]:
    return [*literals, "*", *PARTIAL]


# Each scope is one draw from a list (drawing its segments one by one cost as much
# as the rest of an example).
THREE_SEGMENTS = [
    "/".join(parts)
    for parts in itertools.product(_segments(TENANTS), _segments(ENVIRONMENTS), _segments(AGENTS))
]
# Two-segment scopes that read as tenant/environment and mean it under actauth too
# (the ambiguous ones are refused; see test_ambiguous_two_segment_scopes_are_refused).
TWO_SEGMENTS = [f"{tenant}/*" for tenant in [*TENANTS, "*", "acme*", "acme-*", "a*"]] + [
    f"{tenant}/{environment}"
    for tenant in TENANTS
    for environment in ["prod*", "stag*", "production*"]
]
OTHER_SHAPES = ["*", "acme", "acme*", "*/*/*/*", "acme/prod/bot/x", ""]
SCOPES = st.one_of(
    st.sampled_from(THREE_SEGMENTS), st.sampled_from(TWO_SEGMENTS), st.sampled_from(OTHER_SHAPES)
)

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-3, 300)
    | st.floats(allow_nan=False, width=32)
    | st.sampled_from(["EUR", "USD", "gold", "vip", "", "E", "100", "tier"])
)
# Lists and mappings as a few fixed shapes: recursive strategies made an example's
# values cost more than everything else in it.
COMPOSITES = [
    [],
    ["EUR", "USD"],
    [1, 2.5, "100"],
    ["vip", 3, None],
    [True],
    [[1], {"tier": "gold"}],
    {},
    {"tier": "gold"},
    {"tier": 100, "x": ["vip"]},
    {"x": None},
]
VALUES = SCALARS | st.sampled_from(COMPOSITES)


@st.composite
def _leaf(draw: st.DrawFn) -> dict[str, Any]:
    leaf = {"field": draw(st.sampled_from(FIELDS)), "op": draw(st.sampled_from(OPS))}
    if draw(st.integers(0, 9)):  # sometimes no value at all: actauth compares with None
        leaf["value"] = draw(VALUES)
    return leaf


CONDITIONS = st.recursive(
    _leaf(),
    lambda inner: st.builds(
        lambda group, members: {group: members},
        st.sampled_from(["all", "any"]),
        st.lists(inner | st.none(), max_size=3),
    ),
    max_leaves=5,
)


@st.composite
def _rule(draw: st.DrawFn) -> dict[str, Any]:
    rule: dict[str, Any] = {}
    name = draw(st.sampled_from([None, None, "r1", "r2", "dup", "dup", ""]))
    if name is not None:
        rule["name"] = name
    rule["scope"] = draw(SCOPES)
    rule["tool"] = draw(st.sampled_from(TOOLS))
    rule["decision"] = draw(st.sampled_from(["allow", "ask", "deny"]))
    if draw(st.booleans()):
        rule["when"] = draw(CONDITIONS)
    if draw(st.integers(0, 9)) == 0:
        rule["description"] = "an extra key actauth ignores"
    return rule


@st.composite
def _rule_file(draw: st.DrawFn) -> dict[str, Any]:
    raw: dict[str, Any] = {}
    default = draw(st.sampled_from([None, "allow", "ask", "deny"]))
    if default is not None:
        raw["default_decision"] = default
    raw["rules"] = draw(st.lists(_rule(), max_size=6))
    return raw


ARGS = st.fixed_dictionaries(
    {},
    optional={
        "amount": SCALARS,
        "currency": SCALARS,
        "tags": st.lists(SCALARS, max_size=3),
        "flag": st.booleans() | st.none(),
        "customer": st.dictionaries(st.sampled_from(["tier", "x"]), VALUES, max_size=2),
    },
)
WHERE = list(itertools.product(TENANTS, ENVIRONMENTS, AGENTS))
CALLS = st.lists(
    st.tuples(st.sampled_from(TOOLS), ARGS, st.sampled_from(WHERE)), min_size=1, max_size=4
)


def signoff_decides(
    rules: RuleSet, tool: str, args: dict[str, Any], scope: Scope
) -> tuple[str, str, str | None]:
    verdict = decide(rules, tool, args, scope)
    return verdict.decision, verdict.reason, verdict.rule


def both(path: Path, agent: str = "bot") -> tuple[RuleSet, actauth.Gate]:
    """The file as signoff loads it for ``agent``, and as actauth loads it."""
    return load_rules(path, agent), actauth.Gate.from_config(path)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(raw=_rule_file(), calls=CALLS)
def test_signoff_decides_every_call_as_actauth(
    raw: dict[str, Any], calls: list[tuple[str, dict[str, Any], tuple[str, str, str]]]
) -> None:
    # Given a rule file actauth accepts, when both gate the same calls, then they agree.
    # Both read the same parsed mapping: YAML parsing is PyYAML's safe loader on both
    # sides (the file-level tests below go through it), and skipping it here halves the
    # cost of an example.
    rules = rules_from(raw, "actauth.yml", "bot")
    gate = actauth.Gate(
        actauth.RuleSet(
            [actauth.RuleSet._parse_rule(rule) for rule in raw.get("rules", [])],
            default_decision=actauth.Decision(raw.get("default_decision", "ask")),
        )
    )

    for tool, args, (tenant, environment, agent) in calls:
        scope = Scope(tenant=tenant, environment=environment, agent=agent)
        assert signoff_decides(rules, tool, args, scope) == actauth_decides(gate, tool, args, scope)


@pytest.mark.parametrize("agent", sorted(p.parent.name for p in REPO.glob("agents/*/actauth.yml")))
def test_the_checked_in_agents_decide_as_actauth(agent: str) -> None:
    path = REPO / "agents" / agent / "actauth.yml"
    rules, gate = both(path, agent)
    tools = {rule["tool"] for rule in yaml.safe_load(path.read_text())["rules"]} | {"other"}
    grid = itertools.product(
        sorted(tools), [*TENANTS, "acme-corp", "default"], [*ENVIRONMENTS, "dev"], [agent, "x"]
    )

    for tool, tenant, environment, who in grid:
        scope = Scope(tenant=tenant, environment=environment, agent=who)
        args = {"amount": 500, "orderId": "A-1001"}
        assert signoff_decides(rules, tool, args, scope) == actauth_decides(gate, tool, args, scope)


def test_the_issue_cases_allow_as_actauth_does(tmp_path: Path) -> None:
    # refunds-allowed (no when) then big-refunds-ask (when amount > 100) at one scope:
    # actauth keeps declaration order among equally specific rules, so 500 is allowed.
    path = tmp_path / "actauth.yml"
    path.write_text(
        "rules:\n"
        "  - {name: refunds-allowed, scope: '*/*', tool: issue_refund, decision: allow}\n"
        "  - name: big-refunds-ask\n"
        "    scope: '*/*'\n"
        "    tool: issue_refund\n"
        "    decision: ask\n"
        "    when: {field: amount, op: gt, value: 100}\n"
        # acme-* counts as a concrete segment: it outranks the `*` tenant declared first.
        "  - {name: any-tenant, scope: '*/production/*', tool: close, decision: deny}\n"
        "  - {name: acme-tenants, scope: 'acme-*/production/*', tool: close, decision: allow}\n",
        encoding="utf-8",
    )
    scope = Scope(tenant="acme-eu", environment="production", agent="bot")
    rules, gate = both(path)

    for tool, args, expected in [
        ("issue_refund", {"amount": 500}, ("allow", "matched rule 'refunds-allowed'")),
        ("close", {}, ("allow", "matched rule 'acme-tenants'")),
    ]:
        decision, reason, _ = signoff_decides(rules, tool, args, scope)
        assert (decision, reason) == expected
        assert signoff_decides(rules, tool, args, scope) == actauth_decides(gate, tool, args, scope)


AMBIGUOUS = [
    (tenant, environment)
    for tenant in ["*", "acme", "acme-*"]
    for environment in ["prod", "production", "staging", "prod*", "*ing"]
    if not (environment.endswith("*") and tenant == "acme")
] + [("*-eu", "*"), ("*a", "*")]
GRID = list(
    itertools.product(
        [*TENANTS, "x", "acme-x"],
        [*ENVIRONMENTS, "dev", "x-eu", "xa"],
        ["bot", "prod", "production", "staging", "prod-bot", "sing"],
    )
)


@pytest.mark.parametrize(("tenant", "environment"), AMBIGUOUS)
def test_ambiguous_two_segment_scopes_are_refused(
    tmp_path: Path, tenant: str, environment: str
) -> None:
    # Given a tenant/environment scope whose glob actauth would stretch over the agent,
    # then it really decides differently for some call, and signoff refuses it, saying so.
    pattern = f"{tenant}/{environment}"
    differs = [
        (t, e, a)
        for t, e, a in GRID
        if fnmatchcase(f"{t}/{e}/{a}", pattern)
        != (fnmatchcase(t, tenant) and fnmatchcase(e, environment))
    ]
    path = tmp_path / "actauth.yml"
    path.write_text(f"rules:\n  - {{name: r, scope: '{pattern}', tool: t, decision: ask}}\n")

    with pytest.raises(ConfigError) as caught:
        load_rules(path, "bot")

    assert differs
    assert caught.value.field == "rules[0] 'r'.scope"
    assert "actauth 0.0.4 matches a scope against 'tenant/environment/agent'" in str(caught.value)
    assert f"write '{pattern}/*'" in str(caught.value)
