"""Builds a deployment's services from the environment the template sets, once per cold start."""

from __future__ import annotations

import os

from signoff.agents import AgentCatalog
from signoff.api.context import Api
from signoff.aws import agents_dir
from signoff.aws.channels import chat_from_env
from signoff.aws.turns import turns_from_env
from signoff.clock import SystemClock
from signoff.continuations.aws import LambdaContinuations
from signoff.keyring import rotating_signer
from signoff.queue.sqs import SqsQueue
from signoff.secrets.aws import SecretsManagerSecrets
from signoff.sessionkeys import SESSION_KEY_SECRET, session_keys_from
from signoff.store.dynamodb import DynamoStore
from signoff.tokens import RESUME_SIGNING_SECRET

__all__ = ["api_from_env"]


def api_from_env() -> Api:
    """The deployment described by ``SIGNOFF_*`` variables (template.yaml's Globals).

    Raises:
        UsageError: a required variable is missing.
    """
    clock = SystemClock()
    store = DynamoStore.from_env(clock=clock)
    agents = AgentCatalog(agents_dir())
    turns = turns_from_env(agents=agents, store=store, queue=SqsQueue.from_env(), clock=clock)
    return Api(
        turns=turns,
        agents=agents,
        sessions=store.sessions,
        pending=store.pending,
        outbox=store.outbox,
        api_keys=store.api_keys,
        make_signer=lambda: rotating_signer(
            SecretsManagerSecrets.from_env((RESUME_SIGNING_SECRET,)), clock
        ),
        make_session_keys=lambda: session_keys_from(
            SecretsManagerSecrets.from_env((SESSION_KEY_SECRET,))
        ),
        make_chat=lambda: chat_from_env(agents.channels, clock),
        continuations=LambdaContinuations.from_env(),
        clock=clock,
        environment=os.environ.get("SIGNOFF_ENVIRONMENT", "production"),
        allow_anonymous=os.environ.get("SIGNOFF_ALLOW_ANONYMOUS", "false").lower() == "true",
    )
