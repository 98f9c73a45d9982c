"""``bench/capacity.py``'s deployment: its settings from the template, its services over
one metered store.

``deployment_variables`` reads the message function's ``SIGNOFF_*`` variables from
``template.yaml`` as a deployed function gets them; ``wire`` builds ``Turns``, the
notifier and the sweeper as the functions build them, over the store ports
``MemoryStore`` builds, every one rebound to one ``MeteringTable`` (``metered_store``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from bench.capacity_workload import APPROVER, RATE, ROOT
from bench.metering import MeteringTable

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from bench.metering import GlobalIndex
    from signoff.durable.sweeper import Sweeper
    from signoff.durable.turns import Turns
    from signoff.notify.hub import Notifier
    from signoff.queue.memory import MemoryQueue
    from signoff.settings import Deployment
    from signoff.store.memory import MemoryStore

# Each of a turn's two runs (to its pause; from the approval to its end) holds a run
# slot while its model works, about 2 s (docs/operations.md, "Throughput settings"): the cap that
# serves the rate (Little's law) is rate * 2 * this, unless --set gives
# SIGNOFF_MAX_CONCURRENT_RUNS.
RUN_SECONDS: Final = 2.0

# -- the deployment ---------------------------------------------------------------------------


def deployment_variables(
    template: Mapping[str, Any], rate: float, overrides: Mapping[str, str]
) -> dict[str, str]:
    """The message function's ``SIGNOFF_*`` variables as the template's defaults set them.

    For a rate above the workload's, every ``SIGNOFF_*_SHARDS`` count is raised by the
    same factor (docs/scale.md: what to change for ten times the load); the run cap is
    sized by Little's law (``RUN_SECONDS``). ``overrides`` win over both.
    """
    from signoff_dev.local.template import Tag

    parameters = template.get("Parameters", {})
    declared = dict(template.get("Globals", {}).get("Function", {}).get("Environment", {}))
    variables = dict(declared.get("Variables", {}))
    message = template["Resources"].get("MessageFunction", {}).get("Properties", {})
    variables |= message.get("Environment", {}).get("Variables", {})
    found: dict[str, str] = {}
    for name, value in variables.items():
        if isinstance(value, Tag):
            if value.name != "Ref" or value.value not in parameters:
                continue  # a resource's name or ARN: nothing the store reads
            value = parameters[value.value].get("Default", "")
        if name.startswith("SIGNOFF_") and str(value).strip():
            found[name] = str(value)
    factor = rate / RATE
    for name, value in list(found.items()):
        if name.endswith("_SHARDS") and factor > 1:
            found[name] = str(math.ceil(int(value) * factor))
    runs = int(found.get("SIGNOFF_MAX_CONCURRENT_RUNS", "0"))
    if runs:
        found["SIGNOFF_MAX_CONCURRENT_RUNS"] = str(max(runs, math.ceil(rate * 2 * RUN_SECONDS)))
    found["SIGNOFF_AGENTS_DIR"] = str(ROOT / "agents")
    return found | dict(overrides)


def metered_store(
    deployment: Deployment, indexes: Sequence[GlobalIndex], clock: Any
) -> tuple[MemoryStore, MeteringTable]:
    """The store ports ``MemoryStore`` builds, every one over one ``MeteringTable``."""
    from signoff.store.keys import Shards
    from signoff.store.memory import MemoryStore
    from signoff.store.stored import Stored

    # the shard counts DynamoStore.from_env takes from the deployment
    shards = Shards(sweep=deployment.sweep_shards, listing=deployment.listing_shards)
    store = MemoryStore(clock=clock, shards=shards)
    table = MeteringTable(store.table, indexes)
    store.table = table  # type: ignore[assignment]  # a port built from now on is over it
    for port in vars(store).values():  # one built before: rebound
        if isinstance(port, Stored):
            port._items = table
    for name in ("sessions", "pending", "outbox", "audit", "api_keys", "slots"):
        port = getattr(store, name)
        if isinstance(port, Stored) and port._items is not table:
            # what it wrote would go uncharged: a run metering nothing, passing
            raise SystemExit(f"the store's {name} port is not over the metering table")
    return store, table


@dataclass
class Wiring:
    """One deployment's services over a metered store, as the functions build them."""

    store: MemoryStore
    table: MeteringTable
    queue: MemoryQueue
    turns: Turns
    notifier: Notifier
    sweeper: Sweeper
    clock: Any


def wire(deployment: Deployment, indexes: Sequence[GlobalIndex]) -> Wiring:
    """Turns, the notifier and the sweeper of ``deployment`` over one metered store."""
    from signoff.agents import AgentCatalog
    from signoff.aws.turns import turns_from_env
    from signoff.channels.memory import RecordingChannel, RecordingMailbox
    from signoff.clock import ManualClock
    from signoff.durable.sweeper import Sweeper
    from signoff.errors import SignoffError
    from signoff.keys.tokens import signer_from
    from signoff.notify.compose import Composer
    from signoff.notify.hub import Notifier, RetrySchedule
    from signoff.queue.memory import MemoryQueue
    from signoff.secrets.memory import MemorySecrets
    from signoff.store.migrate import migrator_for

    clock = ManualClock()
    store, table = metered_store(deployment, indexes, clock)
    queue = MemoryQueue()
    agents = AgentCatalog(deployment.agents_dir)
    turns = turns_from_env(deployment, agents=agents, store=store, queue=queue, clock=clock)  # type: ignore[arg-type]
    signer = signer_from(MemorySecrets({"resume-signing": "k" * 32}))
    composer = Composer(signer=signer, public_url="https://signoff.example.com")
    # the agent's channels (channels.yaml: a webhook, and an email to one approver)
    channels: dict[str, Any] = {
        "local-webhook": RecordingChannel("local-webhook"),
        "local-email": RecordingMailbox("local-email", [APPROVER]),
    }
    notifier = Notifier(
        pending=store.pending,
        outbox=store.outbox,
        channels=channels,
        composer=lambda: composer,
        clock=clock,
        retries=RetrySchedule(deployment.notify_retry_delays),
    )

    def remind_after(name: str) -> float | None:
        try:
            seconds: float | None = agents.get(name).config.remind_after
        except SignoffError:
            return None  # the agent is gone
        return seconds

    # as sweeper_from_env builds it (every task run here: the deployment's workers do
    # the same reads, one task each)
    sweeper = Sweeper(
        turns=turns,
        sessions=store.sessions,
        pending=store.pending,
        outbox=store.outbox,
        queue=queue,
        clock=clock,
        shards=store.shards.sweep,
        migrator=migrator_for(store, remind_after=remind_after),
    )
    return Wiring(store, table, queue, turns, notifier, sweeper, clock)
