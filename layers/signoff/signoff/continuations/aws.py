"""Continuations as asynchronous invocations of the function that runs turns."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol, Self, cast

from botocore.exceptions import BotoCoreError, ClientError

from signoff.continuations.base import continuation_event
from signoff.errors import StoreUnavailable
from signoff.settings import Deployment

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["LambdaClient", "LambdaContinuations"]

# What Lambda answers when it has queued an "Event" (asynchronous) invocation.
_ACCEPTED = 202


class LambdaClient(Protocol):
    """The one call of boto3's Lambda client this adapter makes."""

    def invoke(
        self, *, FunctionName: str, InvocationType: str, Payload: str
    ) -> Mapping[str, Any]: ...


class LambdaContinuations:
    """Each continuation is one asynchronous invocation of ``function_name``."""

    def __init__(self, function_name: str, client: LambdaClient) -> None:
        self.function_name = function_name
        self._client = client

    @classmethod
    def from_env(cls, deployment: Deployment | None = None) -> Self:
        """The function named by ``SIGNOFF_CONTINUE_FUNCTION``, with a default boto3 client.

        Raises:
            UsageError: ``SIGNOFF_CONTINUE_FUNCTION`` is not set.
        """
        from signoff.awsclients import lazy_client

        name = (deployment or Deployment.from_env()).need("continue_function")
        # boto3's stubs for Lambda are not installed; the client has the one call we make.
        return cls(name, cast("LambdaClient", lazy_client("lambda")))

    def schedule(self, session_id: str) -> None:
        """Invoke the function asynchronously with the session's continuation event.

        Raises:
            UsageError: ``session_id`` is empty.
            StoreUnavailable: Lambda did not queue the invocation.
        """
        payload = json.dumps(continuation_event(session_id))
        try:
            answer = self._client.invoke(
                FunctionName=self.function_name, InvocationType="Event", Payload=payload
            )
        except (ClientError, BotoCoreError) as exc:
            raise StoreUnavailable(
                f"could not continue session {session_id} in {self.function_name}: {exc}"
            ) from exc
        status = answer.get("StatusCode")
        if status != _ACCEPTED:
            raise StoreUnavailable(
                f"Lambda answered {status} to continuing session {session_id}; expected 202"
            )
