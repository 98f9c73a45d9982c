"""Contract of the SecretSource port, run against every adapter: memory, environment, and
Secrets Manager on moto; then what only the Secrets Manager adapter does (cache, errors)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import boto3
import pytest
from aws_lambda_powertools.utilities.parameters import SecretsProvider
from botocore.config import Config
from botocore.stub import Stubber

from signoff.errors import SecretMissing, StoreUnavailable
from signoff.keys.tokens import RESUME_SIGNING_SECRET, Signer, signer_from
from signoff.secrets.aws import ReferencedSecrets, SecretsManagerSecrets, secret_id_variable
from signoff.secrets.env import EnvSecrets, variable_name
from signoff.secrets.memory import MemorySecrets
from tests.support.aws import fake_credentials, mocked_aws

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from mypy_boto3_secretsmanager.client import SecretsManagerClient

    from signoff.secrets import SecretSource

    # Given the secrets that exist, a source that reads them.
    MakeSource = Callable[[dict[str, str]], SecretSource]

KEY_1 = "k1-0123456789abcdef-ffff"
KEY_2 = "k2-fedcba9876543210-eeee"
NOW = 1_767_225_600


@pytest.fixture
def sm_client(monkeypatch: pytest.MonkeyPatch) -> Iterator[SecretsManagerClient]:
    """A Secrets Manager client on moto, with credentials no real endpoint accepts."""
    with mocked_aws(monkeypatch):
        yield boto3.client("secretsmanager")


@pytest.fixture(params=["memory", "env", "secretsmanager"])
def make_source(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> MakeSource:
    if request.param == "memory":
        return lambda values: MemorySecrets(values)

    if request.param == "env":

        def from_environment(values: dict[str, str]) -> SecretSource:
            for name, value in values.items():
                monkeypatch.setenv(variable_name(name), value)
            return EnvSecrets()

        return from_environment

    client: SecretsManagerClient = request.getfixturevalue("sm_client")

    def from_secrets_manager(values: dict[str, str]) -> SecretSource:
        # As deployed: the template passes each secret's ARN in an environment variable.
        for name, value in values.items():
            arn = client.create_secret(Name=f"signoff/{name}", SecretString=value)["ARN"]
            monkeypatch.setenv(secret_id_variable(name), arn)
        return SecretsManagerSecrets.from_env([*values, "absent"])

    return from_secrets_manager


# -- the contract ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        KEY_1,
        "  padded with spaces  ",
        "naïve — ünïcode ✓",
        json.dumps({"current": "k1", "keys": {"k1": KEY_1}}),
        "x" * 4096,
    ],
    ids=["plain", "spaces", "unicode", "json", "long"],
)
def test_a_stored_secret_is_returned_exactly(make_source: MakeSource, value: str) -> None:
    source = make_source({"resume-signing": value})

    assert source.get("resume-signing") == value


def test_a_fresh_read_returns_the_stored_value(make_source: MakeSource) -> None:
    source = make_source({"resume-signing": KEY_1})

    assert source.get("resume-signing", fresh=True) == source.get("resume-signing") == KEY_1


def test_each_name_has_its_own_value(make_source: MakeSource) -> None:
    source = make_source({"resume-signing": KEY_1, "slack-signing": KEY_2})

    assert (source.get("resume-signing"), source.get("slack-signing")) == (KEY_1, KEY_2)


def test_an_absent_secret_raises_missing_naming_it_and_no_value(make_source: MakeSource) -> None:
    source = make_source({"resume-signing": KEY_1})

    with pytest.raises(SecretMissing) as caught:
        source.get("absent")

    assert caught.value.name == "absent"
    assert "absent" in str(caught.value)
    assert KEY_1 not in str(caught.value)


def test_a_plain_secret_gives_a_signer_with_key_k1(make_source: MakeSource) -> None:
    signer = signer_from(make_source({"resume-signing": KEY_1}))

    token = signer.issue("p1", "decide", "acme", {"amount": 25}, NOW + 60)

    assert signer.current == "k1"
    assert Signer({"k1": KEY_1.encode()}, "k1").verify(token, NOW).pending_id == "p1"


def test_a_rotated_secret_signs_with_the_new_key_and_verifies_the_old(
    make_source: MakeSource,
) -> None:
    before = Signer({"k1": KEY_1.encode()}, "k1")
    old_token = before.issue("p1", "decide", "acme", None, NOW + 60)
    rotated = json.dumps({"current": "k2", "keys": {"k1": KEY_1, "k2": KEY_2}})

    signer = signer_from(make_source({"resume-signing": rotated}))

    assert signer.verify(old_token, NOW).key_id == "k1"
    assert signer.issue("p2", "answer", "acme", None, NOW + 60).startswith("v1.k2.")


def test_a_malformed_key_set_raises_missing_without_the_value(make_source: MakeSource) -> None:
    source = make_source({"resume-signing": '{"current": "k1", "keys": {"k1": ' + f'"{KEY_1}"'})

    with pytest.raises(SecretMissing) as caught:
        signer_from(source)

    assert KEY_1 not in str(caught.value)
    assert caught.value.__cause__ is None or KEY_1 not in str(caught.value.__cause__)


# -- environment and memory -------------------------------------------------------------


def test_the_environment_variable_is_the_prefix_and_the_upper_snake_name() -> None:
    assert variable_name("resume-signing") == "SIGNOFF_SECRET_RESUME_SIGNING"
    assert variable_name("lark.app secret", "X_") == "X_LARK_APP_SECRET"


def test_an_empty_environment_variable_counts_as_missing() -> None:
    source = EnvSecrets(environ={"SIGNOFF_SECRET_RESUME_SIGNING": ""})

    with pytest.raises(SecretMissing) as caught:
        source.get("resume-signing")

    assert "SIGNOFF_SECRET_RESUME_SIGNING" in caught.value.reason


def test_env_secrets_read_the_variable_at_each_get(monkeypatch: pytest.MonkeyPatch) -> None:
    source = EnvSecrets(prefix="TEST_SIGNOFF_")
    monkeypatch.setenv("TEST_SIGNOFF_RESUME_SIGNING", KEY_1)
    assert source.get("resume-signing") == KEY_1

    monkeypatch.setenv("TEST_SIGNOFF_RESUME_SIGNING", KEY_2)

    assert source.get("resume-signing") == KEY_2


def test_memory_secrets_replace_a_value_and_keep_no_empty_one() -> None:
    source = MemorySecrets({"resume-signing": KEY_1})
    source.set("resume-signing", KEY_2)
    assert source.get("resume-signing") == KEY_2

    source.set("resume-signing", "")

    with pytest.raises(SecretMissing):
        source.get("resume-signing")


# -- Secrets Manager ----------------------------------------------------------------------


def test_the_secret_id_variable_is_named_after_the_secret() -> None:
    assert secret_id_variable("resume-signing") == "SIGNOFF_RESUME_SIGNING_SECRET_ARN"


def test_the_deployed_secrets_build_their_client_with_the_function(
    sm_client: SecretsManagerClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A link, a chat callback or a notification reads a secret in its first invocation:
    the client is built at import, never moved into that invocation; a model key given
    as a reference builds its client at the first read, in the turn that needs it."""
    from signoff.aws.channels import deployment_secrets
    from signoff.channels.config import ChannelsConfig
    from signoff.settings import Deployment

    sm_client.create_secret(Name="stack/resume-signing", SecretString=KEY_1)
    built: list[str] = []
    real = boto3.client
    monkeypatch.setattr(
        boto3, "client", lambda service, **kw: built.append(service) or real(service, **kw)
    )
    deployment = Deployment.from_env({"SIGNOFF_CHANNEL_SECRETS_PREFIX": "stack/"})

    source = deployment_secrets(ChannelsConfig(), deployment)
    SecretsManagerSecrets.from_env([RESUME_SIGNING_SECRET], deployment=deployment)
    referenced = ReferencedSecrets("stack/")
    assert built == ["secretsmanager", "secretsmanager"]

    assert source.get(RESUME_SIGNING_SECRET) == KEY_1
    assert built == ["secretsmanager", "secretsmanager"]
    assert referenced.get("resume-signing") == KEY_1
    assert built == ["secretsmanager", "secretsmanager", "secretsmanager"]


def test_a_value_is_cached_for_max_age(sm_client: SecretsManagerClient) -> None:
    sm_client.create_secret(Name="signing", SecretString=KEY_1)
    cached = SecretsManagerSecrets(
        {"resume-signing": "signing"}, SecretsProvider(boto3_client=sm_client), max_age=300
    )
    fresh = SecretsManagerSecrets(
        {"resume-signing": "signing"}, SecretsProvider(boto3_client=sm_client), max_age=0
    )
    assert cached.get("resume-signing") == fresh.get("resume-signing") == KEY_1

    sm_client.put_secret_value(SecretId="signing", SecretString=KEY_2)

    assert cached.get("resume-signing") == KEY_1
    assert fresh.get("resume-signing") == KEY_2


def test_a_fresh_read_goes_past_the_cache_and_refills_it(sm_client: SecretsManagerClient) -> None:
    sm_client.create_secret(Name="signing", SecretString=KEY_1)
    source = SecretsManagerSecrets(
        {"resume-signing": "signing"}, SecretsProvider(boto3_client=sm_client), max_age=300
    )
    assert source.get("resume-signing") == KEY_1

    sm_client.put_secret_value(SecretId="signing", SecretString=KEY_2)

    assert source.get("resume-signing") == KEY_1
    assert source.get("resume-signing", fresh=True) == KEY_2
    assert source.get("resume-signing") == KEY_2


def test_a_binary_secret_is_read_as_utf8_text(sm_client: SecretsManagerClient) -> None:
    sm_client.create_secret(Name="signing", SecretBinary=KEY_1.encode())
    source = SecretsManagerSecrets(
        {"resume-signing": "signing"}, SecretsProvider(boto3_client=sm_client)
    )

    assert source.get("resume-signing") == KEY_1


def test_a_binary_secret_that_is_not_text_is_missing(sm_client: SecretsManagerClient) -> None:
    sm_client.create_secret(Name="signing", SecretBinary=b"\xff\xfe\x00")
    source = SecretsManagerSecrets(
        {"resume-signing": "signing"}, SecretsProvider(boto3_client=sm_client)
    )

    with pytest.raises(SecretMissing, match="not UTF-8"):
        source.get("resume-signing")


@pytest.mark.parametrize("deleted", [False, True], ids=["never-created", "deleted"])
def test_a_configured_id_without_a_readable_secret_is_missing(
    sm_client: SecretsManagerClient, deleted: bool
) -> None:
    if deleted:
        sm_client.create_secret(Name="signing", SecretString=KEY_1)
        sm_client.delete_secret(SecretId="signing")
    source = SecretsManagerSecrets(
        {"resume-signing": "signing"}, SecretsProvider(boto3_client=sm_client)
    )

    with pytest.raises(SecretMissing) as caught:
        source.get("resume-signing")

    expected = "InvalidRequestException" if deleted else "ResourceNotFoundException"
    assert expected in caught.value.reason


def test_a_name_without_an_id_variable_is_missing_and_names_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SIGNOFF_RESUME_SIGNING_SECRET_ARN", raising=False)
    with mocked_aws(monkeypatch):
        source = SecretsManagerSecrets.from_env((RESUME_SIGNING_SECRET,))

        with pytest.raises(SecretMissing) as caught:
            source.get("resume-signing")

    assert "SIGNOFF_RESUME_SIGNING_SECRET_ARN" in caught.value.reason


@pytest.mark.parametrize(
    ("code", "raised"),
    [
        ("ThrottlingException", StoreUnavailable),
        ("InternalServiceError", StoreUnavailable),
        ("AccessDeniedException", SecretMissing),
        ("DecryptionFailure", SecretMissing),
    ],
)
def test_aws_errors_become_missing_when_permanent_and_unavailable_when_transient(
    sm_client: SecretsManagerClient, code: str, raised: type[Exception]
) -> None:
    source = SecretsManagerSecrets(
        {"resume-signing": "signing"}, SecretsProvider(boto3_client=sm_client)
    )

    with Stubber(sm_client) as stub:
        stub.add_client_error("get_secret_value", service_error_code=code)
        with pytest.raises(raised) as caught:
            source.get("resume-signing")

    assert code in str(caught.value)


def test_an_unreachable_endpoint_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    # Port 9 on loopback refuses at once; no request leaves the machine.
    fake_credentials(monkeypatch)
    client = boto3.client(
        "secretsmanager",
        endpoint_url="http://127.0.0.1:9",
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=1, read_timeout=1),
    )
    source = SecretsManagerSecrets(
        {"resume-signing": "signing"}, SecretsProvider(boto3_client=client)
    )

    with pytest.raises(StoreUnavailable):
        source.get("resume-signing")
