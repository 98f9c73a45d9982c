"""The agent config page: every agent's resolved config, as ``GET /agents/{name}/config`` has it.

loopengine's ``/agents/config?agent=<name>``. The page draws the very dicts the
JSON route answers (``signoff.agents.describe.describe_agent``), so the two cannot
say different things, and it shows nothing the JSON does not: no secret (a model's
key is named by where it comes from), no path of the server's. Every value is
escaped as on the link pages (``card_html.e``): a system prompt, a tool's
description or a rule's name is an author's text, and shown as text. No script:
``CONFIG_HEADERS`` allows this module's one stylesheet, by its hash, and nothing else.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote, urlencode

from signoff.agents.config import NOTIFY_EVENTS
from signoff.web.card_html import e
from signoff.web.pages import page_headers

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["CONFIG_HEADERS", "CONFIG_PAGE_PATH", "config_href", "config_html"]

CONFIG_PAGE_PATH: Final = "/agents/config"

# Contrast as the link pages: body 16:1, muted 9.7:1, link blue 8.6:1; each
# decision's badge white on its colour >= 6.5:1.
_CSS: Final = (
    "*{box-sizing:border-box}"
    "body{margin:0;font:1rem/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;"
    "color:#1a1a1a;background:#fff}"
    "main{max-width:64rem;margin:0 auto;padding:1rem}"
    "h1{font-size:1.4rem;margin:.5rem 0 1rem}"
    "h2{font-size:1.25rem;margin:2rem 0 .25rem;padding-top:1rem;border-top:2px solid #1f4e99}"
    "h3{font-size:1.05rem;margin:1.25rem 0 .5rem}"
    "a{color:#0b4a9c}.muted{color:#444}code{overflow-wrap:anywhere}"
    "nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.5rem}"
    "nav a{display:inline-block;padding:.4rem .75rem;border:1px solid #767676;"
    "border-radius:.25rem;min-height:2.75rem;line-height:1.9}"
    "nav a[aria-current=page]{background:#1f4e99;color:#fff;border-color:#1f4e99}"
    "dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0 0 .75rem}"
    "dl.facts dt{font-weight:600}dl.facts dd{margin:0;overflow-wrap:anywhere}"
    "pre{background:#f3f3f3;border:1px solid #767676;padding:.75rem;margin:0 0 .75rem;"
    "white-space:pre-wrap;overflow-wrap:anywhere;font-size:.9rem}"
    "ul.cards,ol.cards{list-style:none;margin:0;padding:0;display:grid;gap:.75rem;"
    "grid-template-columns:repeat(auto-fill,minmax(20rem,1fr))}"
    ".cards>li{border:1px solid #767676;border-radius:.25rem;padding:.75rem;min-width:0}"
    ".cards>li>p:first-child{margin:0 0 .25rem;font-weight:600;overflow-wrap:anywhere}"
    "details{margin:0}summary{cursor:pointer;font-weight:600;padding:.25rem 0}"
    ".tag{display:inline-block;padding:0 .4rem;border-radius:.25rem;font-size:.85rem;"
    "font-weight:600;color:#fff;background:#444;margin-right:.25rem}"
    ".tag.allow{background:#1b5e20}.tag.ask{background:#8a4b00}.tag.deny{background:#b71c1c}"
    "table{border-collapse:collapse;width:100%;font-size:.95rem}"
    "th,td{text-align:left;vertical-align:top;padding:.4rem;border-bottom:1px solid #ccc;"
    "overflow-wrap:anywhere}"
    ".problem{border-left:4px solid #b71c1c;padding:.5rem .75rem;background:#fdecea}"
    "@media (max-width:40rem){ul.cards,ol.cards{grid-template-columns:1fr}"
    "dl.facts{grid-template-columns:1fr}dl.facts dd{margin-bottom:.25rem}}"
    "a:focus-visible,summary:focus-visible{outline:3px solid #000;outline-offset:2px}"
)
# No script at all: the policy allows the stylesheet only.
CONFIG_HEADERS: Final[dict[str, str]] = page_headers(_CSS, script=False)

# The hooks as loopengine names them, and what a custom one is (signoff.agents.hooks).
_HOOKS: Final = {
    "onRunStart": "on_run_start: told when a turn starts",
    "onRunFinish": "on_run_finish: told when a turn finishes",
    "tenantFor": "tenant_for: the tenant of a request, from its verified key",
    "sessionIdFor": "session_id_for: the session a message belongs to",
}


def config_href(agent: str | None = None) -> str:
    """The page's URL, for one agent or (None) for every agent."""
    return CONFIG_PAGE_PATH + ("?" + urlencode({"agent": agent}) if agent else "")


def _json(value: Any) -> str:
    return e(json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False))


def _facts(rows: Sequence[tuple[str, str]]) -> str:
    """A definition list of (term, already-escaped HTML) rows."""
    items = "".join(f"<dt>{e(term)}</dt><dd>{value}</dd>" for term, value in rows)
    return f'<dl class="facts">{items}</dl>\n'


def _duration(seconds: float | None) -> str:
    """``1 day``, ``30 minutes``, ``90 seconds``: in the largest unit that divides it."""
    if seconds is None:
        return "none"
    count: float = seconds
    unit = "second"
    if seconds == int(seconds):
        for size, name in ((86400, "day"), (3600, "hour"), (60, "minute")):
            if seconds >= size and seconds % size == 0:
                count, unit = seconds // size, name
                break
    return f"{count:g} {unit}{'' if count == 1 else 's'}"


def _names(names: Sequence[str]) -> str:
    return ", ".join(f"<code>{e(name)}</code>" for name in names) if names else "none"


def _ladder(steps: Sequence[Mapping[str, Any]]) -> str:
    """An escalation ladder, one line per step."""
    lines = []
    for number, step in enumerate(steps, start=1):
        does = []
        if step.get("notify"):
            does.append(f"notify {_names(step['notify'])}")
        if step.get("then"):
            does.append(f"then {e(step['then'])}")
        lines.append(f"{number}. after {e(_duration(step.get('after')))}: {', '.join(does)}")
    return "<br>".join(lines)


def _model(config: Mapping[str, Any]) -> str:
    model = dict(config["model"])
    rows = [
        ("Provider", f"<code>{e(model.pop('provider', ''))}</code>"),
        ("Model", f"<code>{e(model.pop('model', ''))}</code>"),
    ]
    # The remaining settings as the JSON names them: a key by where it comes from
    # (apiKeyEnv, {secret: name}), never its value (describe_agent).
    rows += [(name, f"<code>{_json(value)}</code>") for name, value in model.items()]
    budget = config.get("budget") or {}
    rows += [
        ("Max turns", e(config.get("maxTurns"))),
        ("Token budget", e(budget.get("tokens"))),
        ("Nudge at", e(f"{budget.get('nudgeAt', 0):.0%} of the budget")),
        ("Approval timeout", e(_duration(config.get("approvalTimeoutSeconds")))),
        ("Stuck reminder after", e(_duration(config.get("remindAfterSeconds")))),
    ]
    return "<h3>Model and limits</h3>\n" + _facts(rows)


def _tools(tools: Sequence[Mapping[str, Any]]) -> str:
    if not tools:
        return '<h3>Tools</h3>\n<p class="muted">No tools.</p>\n'
    cards = []
    for tool in tools:
        name = tool["name"]
        rows = [
            (
                "Parallel-safe",
                "yes: runs beside other safe calls" if tool["safe"] else "no: runs alone",
            ),
            ("Idempotent", "yes" if tool["idempotent"] else "no"),
            ("Editable", "yes: an approver may change its arguments" if tool["editable"] else "no"),
        ]
        cards.append(
            f'<li class="tool"><p><code>{e(name)}</code></p>'
            f"<p>{e(tool.get('description') or '')}</p>{_facts(rows)}"
            f"<details><summary>JSON schema of <code>{e(name)}</code></summary>"
            f"<pre>{_json(tool['parameters'])}</pre></details></li>\n"
        )
    return f'<h3>Tools ({len(tools)})</h3>\n<ul class="cards tools">\n{"".join(cards)}</ul>\n'


def _policy(rule: Mapping[str, Any], agent_ladder: Sequence[Mapping[str, Any]]) -> str:
    """An ask's approval policy in words: who, how many, what a deny takes, the ladder."""
    approvals = rule.get("approvals", 1)
    who = _names(rule.get("from") or ()) if rule.get("from") else "anyone allowed to decide"
    deny = rule.get("denyQuorum", 1)
    words = f"{e(approvals)} approval{'' if approvals == 1 else 's'} from {who}; " + (
        "the first deny decides" if deny == 1 else f"{e(deny)} denies deny it"
    )
    if rule.get("escalate") is not None:
        ladder = _ladder(rule["escalate"]) if rule["escalate"] else "none (the rule's own)"
        return f"{words}<br>escalation (the rule's own):<br>{ladder}"
    if agent_ladder:
        return f"{words}<br>escalation (the agent's):<br>{_ladder(agent_ladder)}"
    return words


def _rules(rules: Mapping[str, Any], agent_ladder: Sequence[Mapping[str, Any]]) -> str:
    default = rules["defaultDecision"]
    head = _facts(
        [
            ("Source", f"<code>{e(rules['source'])}</code>"),
            ("Default decision", f'<span class="tag {e(default)}">{e(default)}</span>'),
        ]
    )
    listed = rules["rules"]
    if not listed:
        none = '<p class="muted">No rules: every call gets the default.</p>\n'
        return f"<h3>Rules</h3>\n{head}{none}"
    cards = []
    for number, rule in enumerate(listed, start=1):
        decision = rule["decision"]
        rows = [
            ("Scope", f"<code>{e(rule['scope'])}</code>"),
            ("Tool", f"<code>{e(rule['tool'])}</code>"),
            ("Decision", f'<span class="tag {e(decision)}">{e(decision)}</span>'),
            ("When", f"<pre>{_json(rule['when'])}</pre>" if "when" in rule else "always"),
        ]
        if decision == "ask":
            rows.append(("Approval policy", _policy(rule, agent_ladder)))
        name = e(rule["name"]) if rule.get("name") else '<span class="muted">(no name)</span>'
        cards.append(f'<li class="rule"><p>{number}. {name}</p>{_facts(rows)}</li>\n')
    return (
        f"<h3>Rules ({len(listed)})</h3>\n{head}"
        '<p class="muted">The most specific scope applies first, then the order below '
        "(actauth's decision).</p>\n"
        f'<ol class="cards rules">\n{"".join(cards)}</ol>\n'
    )


def _notifications(config: Mapping[str, Any]) -> str:
    notify: Mapping[str, Sequence[str]] = config.get("notify") or {}
    rows = "".join(
        f"<tr><td>{e(kind)}</td>"
        f"<td>{_names([name for name, kinds in notify.items() if kind in kinds])}</td></tr>\n"
        for kind in NOTIFY_EVENTS
    )
    table = (
        "<table><thead><tr><th>Notification</th><th>Channels</th></tr></thead>\n"
        f"<tbody>\n{rows}</tbody></table>\n"
    )
    http = config.get("httpNotifier")
    if http:
        table += _facts(
            [
                (
                    "httpNotifier",
                    f"the channel <code>{e(http['name'])}</code> ({e(http['channel'])}), "
                    f"for {_names(http.get('events') or ())}",
                )
            ]
        )
    return f"<h3>Notifications</h3>\n{table}"


def _hooks(hooks: Mapping[str, bool]) -> str:
    rows = "".join(
        f"<tr><td><code>{e(name)}</code></td><td>{'custom (hooks.py)' if custom else 'default'}"
        f'</td><td class="muted">{e(_HOOKS.get(name, ""))}</td></tr>\n'
        for name, custom in hooks.items()
    )
    return (
        "<h3>Hooks</h3>\n<table><thead><tr><th>Hook</th><th>Which</th><th>What it does</th>"
        f"</tr></thead>\n<tbody>\n{rows}</tbody></table>\n"
    )


def _extras(config: Mapping[str, Any]) -> str:
    skills = config.get("skills") or []
    listed = "".join(
        f"<li><code>{e(s['name'])}</code>: {e(s.get('description') or '')}</li>" for s in skills
    )
    body = f"<h3>Skills</h3>\n<ul>{listed}</ul>\n" if skills else ""
    schedule = config.get("schedule")
    if schedule:
        body += f"<h3>Schedule</h3>\n<pre>{_json(schedule)}</pre>\n"
    return body


def _agent(name: str, config: Mapping[str, Any] | None) -> str:
    anchor = f"agent-{quote(name, safe='')}"
    heading = f'<h2 id="{e(anchor)}">{e(name)}</h2>\n'
    if config is None:
        # What is wrong stays in the deployment's log and `signoff check`, as the
        # JSON route keeps it: a configuration error quotes files and settings.
        return (
            f'<section class="agent" aria-labelledby="{e(anchor)}">\n{heading}'
            '<p class="problem">This agent\'s configuration does not load: its requests fail '
            "until an operator fixes it (<code>signoff check</code> and the function's log "
            "name the file and field).</p>\n</section>\n"
        )
    json_href = f"/agents/{quote(name, safe='')}/config"
    return (
        f'<section class="agent" aria-labelledby="{e(anchor)}">\n{heading}'
        f"<p>{e(config.get('description') or '')}</p>\n"
        f'<p class="muted">As JSON: <a href="{e(json_href)}">{e(json_href)}</a></p>\n'
        f"{_model(config)}"
        f"<h3>System prompt</h3>\n<pre>{e(config.get('systemPrompt') or '')}</pre>\n"
        f"{_tools(config.get('tools') or [])}"
        f"{_rules(config['rules'], config.get('escalate') or [])}"
        f"{_notifications(config)}{_hooks(config.get('hooks') or {})}{_extras(config)}"
        "</section>\n"
    )


def config_html(
    agents: Sequence[str],
    shown: Sequence[tuple[str, Mapping[str, Any] | None]],
    *,
    selected: str | None,
) -> str:
    """The page: a link per agent of ``agents``, then each of ``shown`` — its
    ``describe_agent`` dict, or None for an agent whose configuration does not load.
    ``selected``: the one agent asked for (``?agent=``), or None for all of them."""
    links = [(None, "All agents"), *((name, name) for name in agents)]
    current = ' aria-current="page"'
    nav = "".join(
        f'<li><a href="{e(config_href(agent))}"{current if agent == selected else ""}>'
        f"{e(label)}</a></li>"
        for agent, label in links
    )
    sections = "".join(_agent(name, config) for name, config in shown)
    if not agents:
        sections = '<p class="muted">This deployment has no agents.</p>\n'
    title = f"{selected} · agent config" if selected else "Agent config"
    body = (
        f"<h1>{e(title)}</h1>\n"
        '<p class="muted">Each agent as this deployment runs it: its prompt, model, tools, '
        "the rules the gate enforces, where each notification goes and which hooks are its "
        "own. Never a secret: a model's key is named by where it comes from.</p>\n"
        f'<nav aria-label="Agents"><ul>{nav}</ul></nav>\n{sections}'
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="robots" content="noindex, nofollow">\n'
        '<meta name="referrer" content="same-origin">\n'
        f"<title>{e(title)} · signoff</title>\n<style>{_CSS}</style>\n</head>\n"
        f"<body>\n<main>\n{body}</main>\n</body>\n</html>\n"
    )
