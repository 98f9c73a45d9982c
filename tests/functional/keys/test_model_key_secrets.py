"""A model's ``apiKey: {secret: …}`` read from Secrets Manager (moto), as the functions read it.

``signoff.aws.turns`` gives every turn's ``build_model`` one ``ReferencedSecrets``:
a name is the stack's ``<prefix><name>`` (as channel secrets), an ARN is itself,
and a value is reused for the cache's five minutes (a turn per request would
otherwise read Secrets Manager each time); ``fresh`` reads past the cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import boto3
import pytest

from signoff.errors import SecretMissing
from signoff.models.factory import build_model
from signoff.models.settings import ModelSettings
from signoff.secrets.aws import ReferencedSecrets

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.aws import AwsResources


def test_a_name_is_read_under_the_prefix_and_cached(aws: AwsResources) -> None:
    client = boto3.client("secretsmanager")
    client.create_secret(Name="stack/openai-key", SecretString="sk-one")
    keys = ReferencedSecrets("stack/")

    assert keys.get("openai-key") == "sk-one"
    client.put_secret_value(SecretId="stack/openai-key", SecretString="sk-two")
    assert keys.get("openai-key") == "sk-one"  # cached
    assert keys.get("openai-key", fresh=True) == "sk-two"


def test_an_arn_is_read_as_it_is(aws: AwsResources) -> None:
    arn = boto3.client("secretsmanager").create_secret(
        Name="elsewhere/anthropic", SecretString="sk-ant"
    )["ARN"]
    assert ReferencedSecrets("stack/").get(arn) == "sk-ant"


def test_a_missing_secret_is_secret_missing(aws: AwsResources) -> None:
    with pytest.raises(SecretMissing, match="nothing-here"):
        ReferencedSecrets("stack/").get("nothing-here")


def test_the_built_model_sends_the_secret_s_value(
    aws: AwsResources, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SIGNOFF_MODEL", raising=False)
    boto3.client("secretsmanager").create_secret(Name="stack/openai-key", SecretString="sk-sm")
    settings = ModelSettings.model_validate(
        {"provider": "openai", "model": "gpt-4o-mini", "apiKey": {"secret": "openai-key"}}
    )
    model = build_model(settings, tmp_path, secrets=ReferencedSecrets("stack/"))
    assert getattr(model, "inner", model).client.headers["authorization"] == "Bearer sk-sm"
