"""The deployment's settings as one validated model: every ``SIGNOFF_*`` variable.

See ``signoff.settings`` for how a function reads them.
"""

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from signoff.errors import UsageError
from signoff.settings.variables import (
    DEFAULT_LISTING_SHARDS,
    DEFAULT_SWEEP_SHARDS,
    PREFIX,
    SWEEP_QUEUE_URL,
    SWEEP_SHARDS,
    shard_count,
    signoff_values,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["LAMBDA_MAX_TIMEOUT", "LEASE_MARGIN", "Deployment", "secret_id_variable"]

_SECRET_ARN = re.compile(r"^SIGNOFF_[A-Z0-9_]+_SECRET_ARN$")

# Lambda's longest timeout: a function that does not say its own runs at most this long.
LAMBDA_MAX_TIMEOUT = 900.0
# What a session lease outlasts its holder's function timeout by: the clocks of two
# Lambda hosts (the lease is wall time) and the final commit's round trip.
LEASE_MARGIN = 30.0

Required = Literal["table", "bucket", "notify_queue_url", "continue_function"]


def _flag(value: object) -> object:
    # The template's AllowedValues: a switch that opens a door takes no "yes" or "1".
    if isinstance(value, str):
        if value.lower() not in ("true", "false"):
            raise ValueError("must be true or false")
        return value.lower() == "true"
    return value


Flag = Annotated[bool, BeforeValidator(_flag)]
# The sweep planner parses its shard count with the same function (settings.variables).
ShardCount = Annotated[int, BeforeValidator(shard_count)]


def _delays(value: object) -> object:
    # "300,1800,7200": one delay per retry; "none" turns the slow retries off
    if isinstance(value, str):
        if value.lower() == "none":
            return ()
        delays = tuple(float(part) for part in value.split(",") if part.strip())
        if any(delay <= 0 for delay in delays):
            raise ValueError("delays must be positive seconds")
        return delays
    return value


def secret_id_variable(name: str) -> str:
    """A secret's id variable: ``resume-signing`` → ``SIGNOFF_RESUME_SIGNING_SECRET_ARN``."""
    return f"{PREFIX}{re.sub(r'[^A-Za-z0-9]', '_', name).upper()}_SECRET_ARN"


class Deployment(BaseModel):
    """What the template tells a function about its deployment; a field's alias is its variable."""

    model_config = ConfigDict(
        defer_build=True, frozen=True, extra="ignore", protected_namespaces=()
    )

    environment: str = Field("production", alias="SIGNOFF_ENVIRONMENT")
    table: str | None = Field(None, alias="SIGNOFF_TABLE")
    bucket: str | None = Field(None, alias="SIGNOFF_BUCKET")
    notify_queue_url: str | None = Field(None, alias="SIGNOFF_NOTIFY_QUEUE_URL")
    # The sweeper's (the planner's) alone: where it sends the sweep's tasks. Unset, it
    # runs every task itself (signoff.aws.sweeper).
    sweep_queue_url: str | None = Field(None, alias=SWEEP_QUEUE_URL)
    continue_function: str | None = Field(None, alias="SIGNOFF_CONTINUE_FUNCTION")
    retention_days: float = Field(30.0, gt=0, alias="SIGNOFF_RETENTION_DAYS")
    allow_anonymous: Flag = Field(False, alias="SIGNOFF_ALLOW_ANONYMOUS")
    # AgentsLayer unpacks agents/<name>/ to /opt/<name>/.
    agents_dir: Path = Field(Path("/opt"), alias="SIGNOFF_AGENTS_DIR")
    channel_secrets_prefix: str = Field("signoff/", alias="SIGNOFF_CHANNEL_SECRETS_PREFIX")
    # Where links point (the notifier's); empty when the function makes none.
    public_url: str = Field("", alias="SIGNOFF_PUBLIC_URL")
    # ``provider:model`` for every agent: a real provider is one setting away.
    model_override: str | None = Field(None, alias="SIGNOFF_MODEL")
    model_base_url: str | None = Field(None, alias="SIGNOFF_MODEL_BASE_URL")
    # Seconds before each slow retry of a permanently failed notification, comma
    # separated; their count bounds the retries ("" in the template: the default).
    notify_retry_delays: Annotated[tuple[float, ...], BeforeValidator(_delays)] = Field(
        (300.0, 1800.0, 7200.0), alias="SIGNOFF_NOTIFY_RETRY_DELAYS"
    )
    # At most this many turns execute at once, deployment-wide and per tenant (0: no
    # cap), and the seconds a turn waits for a slot before it is deferred
    # (signoff.durable.slots).
    max_concurrent_runs: int = Field(0, ge=0, alias="SIGNOFF_MAX_CONCURRENT_RUNS")
    max_concurrent_runs_per_tenant: int = Field(
        0, ge=0, alias="SIGNOFF_MAX_CONCURRENT_RUNS_PER_TENANT"
    )
    run_slot_wait: float = Field(10.0, ge=0, alias="SIGNOFF_RUN_SLOT_WAIT")
    # How many partitions the sweep index's families and the per-tenant and per-agent
    # listings are spread over (docs/scale.md). Raise them on a live table, never
    # lower them: readers read every shard below the current count.
    sweep_shards: ShardCount = Field(DEFAULT_SWEEP_SHARDS, alias=SWEEP_SHARDS)
    listing_shards: ShardCount = Field(DEFAULT_LISTING_SHARDS, alias="SIGNOFF_LISTING_SHARDS")
    # The function's own timeout in seconds (the template sets each function's); the
    # session lease its turns take derives from it (``lease_seconds``).
    function_timeout: float | None = Field(
        None, gt=0, le=LAMBDA_MAX_TIMEOUT, alias="SIGNOFF_FUNCTION_TIMEOUT"
    )
    # The session lease in milliseconds, set instead of derived (loopengine's claimTtlMs).
    claim_ttl_ms: int | None = Field(None, gt=0, alias="SIGNOFF_CLAIM_TTL_MS")
    # The local stack's webhooks to loopback; never set in the template.
    allow_private_webhooks: Flag = Field(False, alias="SIGNOFF_ALLOW_PRIVATE_WEBHOOKS")
    # Every SIGNOFF_<NAME>_SECRET_ARN, by variable: the ids of the deployment's secrets.
    secret_ids: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _lease_outlasts_the_function(self) -> "Deployment":
        # A lease shorter than the function lets a second process take a live turn's
        # session: the first one's commits are refused (LeaseLost) and its work lost.
        timeout, ttl_ms = self.function_timeout, self.claim_ttl_ms
        if timeout is not None and ttl_ms is not None and ttl_ms / 1000 <= timeout:
            raise ValueError(
                f"SIGNOFF_CLAIM_TTL_MS must be longer than SIGNOFF_FUNCTION_TIMEOUT ({timeout:g} s)"
            )
        return self

    @classmethod
    def from_env(cls, environ: "Mapping[str, str] | None" = None) -> "Deployment":
        """The settings in ``environ`` (the process environment by default).

        An empty variable counts as unset (a template parameter left blank).

        Raises:
            UsageError: a variable's value is invalid; the message names the variable.
        """
        values = signoff_values(environ)
        secret_ids = {name: value for name, value in values.items() if _SECRET_ARN.match(name)}
        try:
            return cls.model_validate({**values, "secret_ids": secret_ids})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"
                for error in exc.errors(include_url=False)
            )
            raise UsageError(f"invalid deployment settings: {problems}") from exc

    def need(self, field: Required) -> str:
        """The value of a variable this builder cannot do without.

        Raises:
            UsageError: the variable is not set; the message names it.
        """
        value = getattr(self, field)
        if not value:
            variable = type(self).model_fields[field].alias
            raise UsageError(f"{variable} is not set; template.yaml sets it for the functions")
        return str(value)

    def secret_id(self, name: str) -> str | None:
        """The id of secret ``name`` from its ``SIGNOFF_<NAME>_SECRET_ARN``, if set."""
        return self.secret_ids.get(secret_id_variable(name))

    @property
    def retention_seconds(self) -> float:
        return self.retention_days * 24 * 3600

    @property
    def lease_seconds(self) -> float:
        """How long a turn holds its session: ``SIGNOFF_CLAIM_TTL_MS``, else the function's
        timeout (Lambda's longest when unknown) plus ``LEASE_MARGIN``.

        A process killed mid-turn (a model call past the timeout, an out-of-memory)
        frees its session when the lease runs out: a message may take it then, and the
        sweeper re-drives a turn that had committed a checkpoint.
        """
        if self.claim_ttl_ms is not None:
            return self.claim_ttl_ms / 1000
        return (self.function_timeout or LAMBDA_MAX_TIMEOUT) + LEASE_MARGIN
