"""The resolved configuration of an agent, as shown to people: never a secret."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from signoff.channels.http_notifier import channel_name
from signoff.models.factory import effective_settings

if TYPE_CHECKING:
    from signoff.agents.agent import Agent
    from signoff.settings import Deployment

__all__ = ["describe_agent"]


def describe_agent(agent: Agent, deployment: Deployment | None = None) -> dict[str, Any]:
    """Prompt, model, tools, rules, skills, notify, schedule and hooks of ``agent``.

    Model settings name the environment variable that holds a key, never its value.
    """
    config = agent.config
    model = effective_settings(config.model, deployment)
    inline = config.rules is not None or config.default_decision is not None
    return {
        "name": agent.name,
        "description": config.description,
        "systemPrompt": agent.system_prompt,
        "model": model.model_dump(by_alias=True, exclude_none=True),
        "maxTurns": config.max_turns,
        "budget": config.budget.model_dump(by_alias=True),
        "approvalTimeoutSeconds": config.approval_timeout,
        "remindAfterSeconds": config.remind_after,
        # the ladder every ask and question climbs, unless its rule has its own escalate
        "escalate": [
            step.model_dump(mode="json", by_alias=True, exclude_none=True)
            for step in config.escalate
        ],
        "tools": [
            {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
                "safe": tool.safe,
                "idempotent": tool.idempotent,
                "editable": tool.editable,
            }
            for tool in agent.tools.values()
        ],
        "rules": {
            # loopengine's inline form lives in agent.yaml (never beside actauth.yml); the
            # file as the agents folder names it, not where this deployment keeps it
            "source": f"{agent.name}/{'agent.yaml' if inline else 'actauth.yml'}",
            "defaultDecision": agent.rules.default_decision,
            # each rule with the keys its file spells (from, denyQuorum, all / any)
            "rules": [
                rule.model_dump(mode="json", by_alias=True, exclude_none=True)
                for rule in agent.rules.rules
            ],
        },
        "skills": [
            {"name": skill.name, "description": skill.description}
            for skill in agent.skills.values()
        ],
        "notify": config.notify,
        # loopengine's httpNotifier: its type, the channel it became and its events (the
        # config holds secret references: not shown)
        "httpNotifier": {
            "channel": config.http_notifier.channel,
            "name": channel_name(agent.name),
            "events": config.http_notifier.events,
        }
        if config.http_notifier
        else None,
        "schedule": config.schedule.model_dump(by_alias=True) if config.schedule else None,
        # Which of hooks.py's functions are the agent's own (true) or the default (false),
        # under loopengine's names, as its config view shows them.
        "hooks": {
            "onRunStart": agent.hooks.on_run_start is not None,
            "onRunFinish": agent.hooks.on_run_finish is not None,
            "tenantFor": agent.hooks.tenant_for is not None,
            "sessionIdFor": agent.hooks.session_id_for is not None,
        },
    }
