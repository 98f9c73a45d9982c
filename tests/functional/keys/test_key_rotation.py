"""Rotating the resume-signing key reaches a warm resolve function without a restart.

The secret is the template's, on moto; the rotation is what docs/deploying.md says:
store ``{"current": "k2", "keys": {"k1": <old>, "k2": <new>}}``, later drop ``k1``.
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

import boto3
import pytest

from signoff.clock import ManualClock
from signoff.keys.keyring import KEYS_MAX_AGE, rotating_signer
from signoff.keys.tokens import RESUME_SIGNING_SECRET, Signer
from signoff.secrets.aws import SecretsManagerSecrets
from tests.support.lambdas import Lambdas, load_event
from tests.support.lambdas import lambdas as lambdas

pytestmark = pytest.mark.usefixtures("lambdas")

NEW_KEY = "k2-fedcba9876543210-fedcba9876543210"


def signing_secret(lambdas: Lambdas) -> str:
    arn: str = lambdas.resources.environment["SIGNOFF_RESUME_SIGNING_SECRET_ARN"]
    return arn


def store_key_set(lambdas: Lambdas, current: str, keys: dict[str, str]) -> None:
    boto3.client("secretsmanager").put_secret_value(
        SecretId=signing_secret(lambdas),
        SecretString=json.dumps({"current": current, "keys": keys}),
    )


def paused_item(lambdas: Lambdas) -> Any:
    response = lambdas.invoke("message", load_event("message_post"))
    assert response["statusCode"] == 202, response["body"]
    return lambdas.api.pending.get(json.loads(response["body"])["id"])


def link(item: Any, key_id: str, key: str) -> str:
    """A link token for ``item`` as a function holding only ``key_id`` would sign it."""
    signer = Signer({key_id: key.encode()}, key_id)
    return signer.issue(item.id, "decide", item.tenant, item.args, time.time() + 3600)


def page_status(lambdas: Lambdas, token: str) -> int:
    status: int = lambdas.invoke("resolve", load_event("link_get", TOKEN=token))["statusCode"]
    return status


def test_a_warm_resolve_function_takes_links_of_a_key_added_by_rotation(lambdas: Lambdas) -> None:
    item = paused_item(lambdas)
    old_key = boto3.client("secretsmanager").get_secret_value(SecretId=signing_secret(lambdas))[
        "SecretString"
    ]
    old_link = link(item, "k1", old_key)
    assert page_status(lambdas, old_link) == 200, "the function is warm, its keys read"

    store_key_set(lambdas, "k2", {"k1": old_key, "k2": NEW_KEY})

    assert page_status(lambdas, link(item, "k2", NEW_KEY)) == 200
    assert page_status(lambdas, old_link) == 200
    assert page_status(lambdas, link(item, "k3", NEW_KEY)) == 403, "an unlisted key stays forged"


def test_links_of_a_dropped_key_are_refused_once_the_keys_are_read_again(
    lambdas: Lambdas,
) -> None:
    # The deployment's signer with a clock the test moves: a dropped key verifies
    # until the signer's keys are due to be read again.
    clock = ManualClock()
    lambdas.resolve.API = dataclasses.replace(
        lambdas.resolve.API,
        make_signer=lambda: rotating_signer(
            SecretsManagerSecrets.from_env((RESUME_SIGNING_SECRET,)), clock
        ),
    )
    item = paused_item(lambdas)
    old_key = boto3.client("secretsmanager").get_secret_value(SecretId=signing_secret(lambdas))[
        "SecretString"
    ]
    old_link = link(item, "k1", old_key)
    store_key_set(lambdas, "k2", {"k1": old_key, "k2": NEW_KEY})
    assert page_status(lambdas, old_link) == 200
    assert page_status(lambdas, link(item, "k2", NEW_KEY)) == 200

    store_key_set(lambdas, "k2", {"k2": NEW_KEY})
    clock.advance(KEYS_MAX_AGE - 1)
    assert page_status(lambdas, old_link) == 200, "until the keys are due to be read again"
    clock.advance(1)

    assert page_status(lambdas, old_link) == 403
    assert page_status(lambdas, link(item, "k2", NEW_KEY)) == 200
