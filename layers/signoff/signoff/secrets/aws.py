"""Secrets from AWS Secrets Manager, through Powertools Parameters (cached for ``max_age``).

Each name maps to a secret id (name or ARN) through an environment variable that
``template.yaml`` sets: ``resume-signing`` → ``SIGNOFF_RESUME_SIGNING_SECRET_ARN``.
Powertools and boto3 are imported inside methods so a function that never reads
a secret does not pay for them at cold start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Self

from signoff.errors import SecretMissing, StoreUnavailable
from signoff.settings import Deployment, secret_id_variable

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from aws_lambda_powertools.utilities.parameters import SecretsProvider

__all__ = ["DEFAULT_MAX_AGE", "ReferencedSecrets", "SecretsManagerSecrets", "secret_id_variable"]

# Seconds a value is reused before Secrets Manager is asked again. The resume-signing
# key set is read past this cache by its RotatingSigner (signoff.keys.keyring), which
# keeps its own schedule.
DEFAULT_MAX_AGE: Final = 300

# Errors that retrying cannot fix: the secret, or the right to read it, is not there.
_PERMANENT: Final = frozenset(
    {
        "ResourceNotFoundException",
        "AccessDeniedException",
        "DecryptionFailure",
        "InvalidRequestException",  # e.g. the secret is scheduled for deletion
        "InvalidParameterException",
    }
)


class SecretsManagerSecrets:
    """Named secrets read from Secrets Manager by a Powertools provider, which caches them."""

    def __init__(
        self,
        secret_ids: Mapping[str, str],
        provider: SecretsProvider | None = None,
        *,
        max_age: int = DEFAULT_MAX_AGE,
    ) -> None:
        self.secret_ids = dict(secret_ids)
        # One provider per adapter, not Powertools' module-wide default, so its
        # cache and its client belong to what was injected. Without one, ``provider()``
        # at the first read (``ReferencedSecrets``: only a turn whose model key is a
        # reference reads one).
        self._provider_given = provider
        self.max_age = max_age

    @property
    def _provider(self) -> SecretsProvider:
        if self._provider_given is None:
            self._provider_given = self.provider()
        return self._provider_given

    @classmethod
    def from_env(
        cls,
        names: Iterable[str],
        *,
        max_age: int = DEFAULT_MAX_AGE,
        deployment: Deployment | None = None,
    ) -> Self:
        """The secrets ``names``, their ids from ``SIGNOFF_<NAME>_SECRET_ARN``; default client.

        The caller names the secrets (``tokens.RESUME_SIGNING_SECRET``,
        ``sessionkeys.SESSION_KEY_SECRET``): the adapter knows no secret of the core.
        A name whose variable is unset is left out, so reading it raises SecretMissing.
        """
        settings = deployment or Deployment.from_env()
        ids = {name: settings.secret_id(name) for name in names}
        # the client now: a first invocation that reads a secret would pay for it otherwise
        return cls({name: sid for name, sid in ids.items() if sid}, cls.provider(), max_age=max_age)

    @staticmethod
    def provider() -> SecretsProvider:
        """A Powertools provider whose client comes from boto3's default session.

        The session the store's and the queue's clients share: a provider left to
        build its own session loads botocore's data files a second time (tens of
        milliseconds of a cold start).
        """
        import boto3
        from aws_lambda_powertools.utilities.parameters import SecretsProvider

        return SecretsProvider(boto3_client=boto3.client("secretsmanager"))

    def get(self, name: str, *, fresh: bool = False) -> str:
        """The secret's current value, from the cache when younger than ``max_age``.

        ``fresh`` asks Secrets Manager past the cache, and caches what it answers.

        Raises:
            SecretMissing: no id configured for ``name``, no such secret, no right to
                read it, or a value that is empty or not UTF-8 text.
            StoreUnavailable: Secrets Manager failed transiently (throttling, network).
        """
        from aws_lambda_powertools.utilities.parameters.exceptions import GetParameterError

        secret_id = self.secret_ids.get(name)
        if not secret_id:
            raise SecretMissing(name, f"{secret_id_variable(name)} is not set")
        try:
            value = self._provider.get(secret_id, max_age=self.max_age, force_fetch=fresh)
        except GetParameterError as exc:
            code = _error_code(exc)
            if code in _PERMANENT:
                raise SecretMissing(name, f"Secrets Manager: {code}") from exc
            raise StoreUnavailable(f"reading secret {name!r} failed: {code or exc}") from exc
        if isinstance(value, bytes):
            try:
                value = value.decode("utf-8")
            except UnicodeDecodeError:
                raise SecretMissing(name, "the binary value is not UTF-8 text") from None
        if not isinstance(value, str) or not value:
            raise SecretMissing(name, "the value is empty")
        return value


class ReferencedSecrets(SecretsManagerSecrets):
    """Secrets a configuration names (a model's ``apiKey: {secret: …}``), not the core's.

    An ARN is the secret's id as it is; any other name is ``<prefix><name>``, the
    deployment's secret prefix (the template's ``<stack>/``, as channel secrets).
    The provider, and with it boto3 and Powertools, is built at the first read: a
    cold start whose agents use no such key does not pay for them. Reads are
    cached for ``max_age`` like every Secrets Manager secret here.
    """

    def __init__(self, prefix: str, *, max_age: int = DEFAULT_MAX_AGE) -> None:
        super().__init__({}, max_age=max_age)
        self.prefix = prefix

    def get(self, name: str, *, fresh: bool = False) -> str:
        """The value of the secret ``name`` (an ARN, or a name under the prefix).

        Raises:
            SecretMissing: no such secret, no right to read it, or an empty value.
            StoreUnavailable: Secrets Manager failed transiently.
        """
        self.secret_ids.setdefault(name, name if name.startswith("arn:") else self.prefix + name)
        return super().get(name, fresh=fresh)


def _error_code(exc: BaseException) -> str | None:
    """The AWS error code behind a Powertools error, found without importing botocore."""
    # Powertools re-raises inside its except block, so the ClientError is the context.
    seen: BaseException | None = exc
    while seen is not None:
        response = getattr(seen, "response", None)
        if isinstance(response, dict):
            code = response.get("Error", {}).get("Code")
            if isinstance(code, str):
                return code
        seen = seen.__cause__ or seen.__context__
    return None
