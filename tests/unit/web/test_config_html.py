"""The agent config page (``signoff.web.config_html``): what it shows, escaped, and no script."""

from __future__ import annotations

import base64
import hashlib
import re
from typing import TYPE_CHECKING

from signoff.agents import load_agent
from signoff.agents.describe import describe_agent
from signoff.web.config_html import CONFIG_HEADERS, config_href, config_html
from tests.unit.web.test_pages import HOSTILE, Outline

if TYPE_CHECKING:
    from pathlib import Path

TOOLS = '''
from signoff.tools import tool


@tool(safe=True)
def lookup(order_id: str) -> str:
    """Look an order up <b>now</b>."""
    return order_id


@tool(editable=True)
def refund(order_id: str, amount: float) -> str:
    """Refund an order."""
    return order_id
'''

RULES = """
default_decision: ask
rules:
  - name: "<script>alert(1)</script>"
    scope: "*/*"
    tool: lookup
    decision: allow
  - name: big-refunds
    scope: "acme/production/*"
    tool: refund
    decision: ask
    when: {all: [{field: amount, op: gt, value: 100}]}
    approvals: 2
    from: [alice, bob]
    denyQuorum: 2
    escalate:
      - {after: 30m, notify: team-chat}
      - {after: 2h, then: deny}
  - scope: "*/staging/*"
    tool: refund
    decision: deny
"""


def sample(tmp_path: Path, hooks: str = "") -> dict[str, object]:
    folder = tmp_path / "agents" / "refunds"
    folder.mkdir(parents=True)
    (folder / "agent.yaml").write_text(
        "description: Refunds <i>desk</i>\n"
        f"system: 'You refund. {HOSTILE}'\n"
        "approvalTimeout: 24h\n"
        "remindAfter: 2h\n"
        "escalate: [{after: 1h, notify: leads}]\n"
        "notify: {team-chat: [approval, question], leads: [stuck], log: [run_finish]}\n"
    )
    (folder / "tools.py").write_text(TOOLS)
    (folder / "actauth.yml").write_text(RULES)
    if hooks:
        (folder / "hooks.py").write_text(hooks)
    return describe_agent(load_agent(folder))


def section(page: str, heading: str) -> str:
    """The HTML from an ``<h3>`` starting with ``heading`` to the next heading."""
    found = re.search(rf"<h3>{re.escape(heading)}.*?(?=<h[23]|</section>)", page, re.DOTALL)
    assert found, heading
    return found.group(0)


def test_the_page_shows_the_model_tools_rules_channels_and_hooks(tmp_path: Path) -> None:
    config = sample(tmp_path, hooks="def tenant_for(headers):\n    return None\n")
    page = config_html(["refunds"], [("refunds", config)], selected="refunds")

    assert "<code>scripted</code>" in section(page, "Model and limits")
    limits = section(page, "Model and limits")
    assert "<dd>1 day</dd>" in limits and "<dd>2 hours</dd>" in limits
    tools = section(page, "Tools (2)")
    assert "yes: runs beside other safe calls" in tools and "no: runs alone" in tools
    assert "JSON schema of <code>lookup</code>" in tools and "&quot;order_id&quot;" in tools
    rules = section(page, "Rules (3)")
    assert "<code>refunds/actauth.yml</code>" in rules
    assert 'class="tag ask">ask</span>' in rules  # the default decision
    # per rule: scope, tool, decision, when (as the file spells it), the approval policy
    assert "<code>acme/production/*</code>" in rules and "&quot;gt&quot;" in rules
    assert "2 approvals from <code>alice</code>, <code>bob</code>; 2 denies deny it" in rules
    assert "1. after 30 minutes: notify <code>team-chat</code>" in rules
    assert "2. after 2 hours: then deny" in rules
    assert "(no name)" in rules and "always" in rules
    notifications = section(page, "Notifications")
    assert re.search(r"<td>approval</td><td><code>team-chat</code></td>", notifications)
    assert re.search(r"<td>stuck</td><td><code>leads</code></td>", notifications)
    assert re.search(r"<td>run_start</td><td>none</td>", notifications)
    hooks = section(page, "Hooks")
    assert re.search(r"<code>tenantFor</code></td><td>custom \(hooks\.py\)", hooks)
    assert re.search(r"<code>onRunStart</code></td><td>default", hooks)


def test_an_ask_without_a_ladder_of_its_own_climbs_the_agents(tmp_path: Path) -> None:
    config = sample(tmp_path)
    rules = config["rules"]
    assert isinstance(rules, dict)
    rules["rules"][1].pop("escalate")
    page = config_html(["refunds"], [("refunds", config)], selected=None)

    assert "escalation (the agent's):<br>1. after 1 hour: notify <code>leads</code>" in page


def test_every_value_is_escaped_and_there_is_no_script(tmp_path: Path) -> None:
    page = config_html(
        ["refunds", HOSTILE], [("refunds", sample(tmp_path)), (HOSTILE, None)], selected=None
    )

    assert "<script" not in page.lower()
    assert "<b>now</b>" not in page and "<i>desk</i>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert " on" not in re.sub(r">[^<]*<", "><", page)  # no event-handler attributes
    outline = Outline(page)
    assert len(outline.all("h1")) == 1 and len(outline.all("main")) == 1
    assert outline.all("html") == [{"lang": "en"}]
    assert not [attrs for _, attrs in outline.tags if "src" in attrs]


def test_the_headers_allow_the_stylesheet_and_no_script(tmp_path: Path) -> None:
    page = config_html([], [], selected=None)
    style = re.search(r"<style>(.*?)</style>", page, re.DOTALL)
    assert style is not None
    digest = base64.b64encode(hashlib.sha256(style.group(1).encode()).digest()).decode()
    policy = CONFIG_HEADERS["Content-Security-Policy"]

    assert f"style-src 'sha256-{digest}'" in policy and "default-src 'none'" in policy
    assert "script-src" not in policy, "default-src 'none' covers scripts: none runs"
    assert CONFIG_HEADERS["X-Frame-Options"] == "DENY"
    assert "This deployment has no agents." in page


def test_the_navigation_marks_the_agent_shown() -> None:
    page = config_html(["a", "b c"], [("b c", None)], selected="b c")

    assert f'<a href="{config_href("b c")}" aria-current="page">b c</a>' in page
    assert config_href("b c") == "/agents/config?agent=b+c"
    assert '<a href="/agents/config">All agents</a>' in page
