"""A deployment's durable turn runner, as the message, resolve and sweeper functions build it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from signoff.agents import AgentCatalog
from signoff.durable.slots import RunCap, RunSlots
from signoff.durable.turns import Turns
from signoff.models.factory import build_model
from signoff.secrets.aws import ReferencedSecrets
from signoff.telemetry import logger
from signoff.yamldocs import SNAPSHOT_FILE, use_snapshot

if TYPE_CHECKING:
    from signoff.clock import Clock
    from signoff.queue.base import Queue
    from signoff.settings import Deployment
    from signoff.store.dynamodb import DynamoStore

__all__ = ["checked_agents", "run_cap", "turns_from_env"]


def checked_agents(deployment: Deployment) -> AgentCatalog:
    """The deployment's agents, each checked now: one log line per misconfigured agent,
    and a warning line per rule of a healthy agent that may be a typo.

    A cold start does not fail for one agent's mistake (the healthy agents keep
    serving, and ``GET /agents`` marks the broken one); the log says which agent,
    which file and field, and what is wrong, before its first request does.
    """
    use_snapshot(deployment.agents_dir / SNAPSHOT_FILE)  # the build's parse of the YAML
    agents = AgentCatalog(deployment.agents_dir)
    problems = agents.problems()
    for name, problem in sorted(problems.items()):
        logger.error(
            "agent misconfigured",
            extra={
                "agent": name,
                "file": problem.file,
                "field": problem.field,
                "problem": problem.problem,
            },
        )
    for name in agents.names():
        if name not in problems:
            agent = agents.get(name)  # loaded by problems(): no second load
            for warning in agent.warnings:
                logger.warning(
                    "agent rule warning",
                    extra={"agent": name, "file": str(agent.rules_file), "warning": warning},
                )
    return agents


def turns_from_env(
    deployment: Deployment, *, agents: AgentCatalog, store: DynamoStore, queue: Queue, clock: Clock
) -> Turns:
    """Turns on the deployment's table, keeping sessions ``SIGNOFF_RETENTION_DAYS`` days,
    at most ``SIGNOFF_MAX_CONCURRENT_RUNS`` of them running at once. Model keys named
    ``apiKey: {secret: …}`` are read from Secrets Manager (``<stack>/<name>`` or an ARN),
    cached across turns."""
    model_keys = ReferencedSecrets(deployment.channel_secrets_prefix)
    return Turns(
        catalog=agents,
        sessions=store.sessions,
        pending=store.pending,
        audit=store.audit,
        queue=queue,
        clock=clock,
        model_for=lambda agent: build_model(
            agent.config.model, agent.directory, deployment, secrets=model_keys
        ),
        retention=deployment.retention_seconds,
        # the function's timeout plus a margin: a turn whose process died holds its
        # session no longer than that
        lease_ttl=deployment.lease_seconds,
        run_slots=RunSlots(store.slots, run_cap(deployment), clock=clock),
    )


def run_cap(deployment: Deployment) -> RunCap:
    """The cap on running turns the template sets (``MaxConcurrentRuns``, per tenant)."""
    return RunCap(
        runs=deployment.max_concurrent_runs,
        per_tenant=deployment.max_concurrent_runs_per_tenant,
        wait=deployment.run_slot_wait,
    )
