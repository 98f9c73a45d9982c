"""Builds the notifier from the environment, once per cold start.

It sends what the store holds and never runs a turn, so it imports neither the
agents' loader nor the durable runner: ``channels.yaml`` and each ``agent.yaml``'s
``httpNotifier`` are all it reads.
"""

from __future__ import annotations

from signoff.aws.channels import deployment_secrets
from signoff.aws.snapstart import prime_before_snapshot, renew_after_restore
from signoff.channels.build import BuildContext, ChannelSet
from signoff.channels.http_notifier import deployment_channels
from signoff.clock import SystemClock
from signoff.keys.keyring import rotating_signer
from signoff.notify.compose import Composer
from signoff.notify.hub import Notifier, RetrySchedule
from signoff.settings import Deployment
from signoff.store.dynamodb import DynamoStore
from signoff.telemetry import notification_failed
from signoff.yamldocs import SNAPSHOT_FILE, use_snapshot

__all__ = ["notifier_from_env"]


def notifier_from_env(deployment: Deployment | None = None) -> Notifier:
    """The notifier of the deployment the template describes (read here when not given)."""
    settings = deployment or Deployment.from_env()
    clock = SystemClock()
    store = DynamoStore.from_env(clock=clock, deployment=settings)
    # What AgentCatalog.channels reads (channels.yaml and the agents' httpNotifier),
    # without loading the agents themselves.
    use_snapshot(settings.agents_dir / SNAPSHOT_FILE)  # the build's parse of the YAML
    channels_config = deployment_channels(settings.agents_dir)
    # Its Secrets Manager client is built now and may outlive a SnapStart restore, as
    # the store's (built on first use) may: no connection is open at init, and
    # credentials are fetched again as they expire (signoff.aws.snapstart).
    secrets = deployment_secrets(channels_config, settings)

    # Each channel is built on its first send and on its own: a cold start reads no
    # secret, and one channel that cannot be built (a missing client library, secret
    # or setting) fails only its own rows.
    channels = ChannelSet(channels_config, BuildContext(secrets=secrets, clock=clock))

    public_url = settings.public_url
    signer = None

    def composer() -> Composer:
        nonlocal signer
        signer = signer or rotating_signer(secrets, clock)
        return Composer(signer=signer, public_url=public_url)

    notifier = Notifier(
        pending=store.pending,
        outbox=store.outbox,
        channels=channels,
        composer=composer,
        clock=clock,
        on_permanent_failure=lambda row, failure: notification_failed(
            row.channel, row.pending_id, failure.reason, retry_at=row.retry_at
        ),
        retries=RetrySchedule(settings.notify_retry_delays),
    )
    # Under SnapStart each restored environment takes a send-lock owner id of its own.
    renew_after_restore(notifier)
    prime_before_snapshot()
    return notifier
