"""Builds a deployment's services from the environment the template sets, once per cold start."""

from __future__ import annotations

from signoff.api.context import Api
from signoff.aws.channels import chat_from_env
from signoff.aws.snapstart import prime_before_snapshot, renew_after_restore
from signoff.aws.turns import checked_agents, turns_from_env
from signoff.clock import SystemClock
from signoff.continuations.aws import LambdaContinuations
from signoff.keys.keyring import rotating_signer
from signoff.keys.sessions import SESSION_KEY_SECRET, session_keys_from
from signoff.keys.tokens import RESUME_SIGNING_SECRET
from signoff.queue.sqs import SqsQueue
from signoff.secrets.aws import SecretsManagerSecrets
from signoff.settings import Deployment
from signoff.store.dynamodb import DynamoStore

__all__ = ["api_from_env"]


def api_from_env(deployment: Deployment | None = None) -> Api:
    """The deployment described by ``SIGNOFF_*`` variables (template.yaml's Globals).

    ``deployment`` is read from the environment when not given: once, here.

    Raises:
        UsageError: a required variable is missing, or one is invalid.
    """
    settings = deployment or Deployment.from_env()
    clock = SystemClock()
    # The clients below are built on first use (signoff.awsclients) and may outlive a
    # SnapStart restore: init opens no connection, and credentials are fetched again
    # as they expire (signoff.aws.snapstart says why both are safe to keep).
    store = DynamoStore.from_env(clock=clock, deployment=settings)
    agents = checked_agents(settings)
    queue = SqsQueue.from_env(settings)
    turns = turns_from_env(settings, agents=agents, store=store, queue=queue, clock=clock)
    api = Api(
        turns=turns,
        agents=agents,
        sessions=store.sessions,
        pending=store.pending,
        outbox=store.outbox,
        api_keys=store.api_keys,
        make_signer=lambda: rotating_signer(
            SecretsManagerSecrets.from_env((RESUME_SIGNING_SECRET,), deployment=settings), clock
        ),
        make_session_keys=lambda: session_keys_from(
            SecretsManagerSecrets.from_env((SESSION_KEY_SECRET,), deployment=settings)
        ),
        make_chat=lambda: chat_from_env(settings, agents.channels, clock),
        continuations=LambdaContinuations.from_env(settings),
        clock=clock,
        environment=settings.environment,
        allow_anonymous=settings.allow_anonymous,
        deployment=settings,
    )
    # Under SnapStart each restored environment takes a lease owner id of its own, and
    # the clients and models the first request would build are in the snapshot.
    renew_after_restore(turns, api=api)
    prime_before_snapshot(agents)
    return api
