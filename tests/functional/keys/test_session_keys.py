"""An agent's ``sessionKey`` (customer-service: ``customerId``) continues one session per
value, per tenant: through the message function on moto, with what the model receives."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import pytest

from signoff.keys.api_keys import new_api_key
from tests.support.lambdas import Lambdas, body, load_event
from tests.support.lambdas import lambdas as lambdas

if TYPE_CHECKING:
    from signoff.agents import Agent
    from signoff.models.base import ModelCall

pytestmark = pytest.mark.usefixtures("lambdas")


class ModelInputs:
    """Wraps the message function's models: every request they get, as text."""

    def __init__(self, lambdas: Lambdas) -> None:
        self.seen: list[str] = []
        turns = lambdas.message.API.turns
        real = turns.model_for

        def model_for(agent: Agent) -> ModelCall:
            model = real(agent)

            def call(request: Any) -> Any:
                self.seen.append(repr(request))
                return model(request)

            return call

        turns.model_for = model_for

    def take(self) -> str:
        seen, self.seen = self.seen, []
        return "\n".join(seen)


def send(lambdas: Lambdas, text: str, *, api_key: str | None = None, **fields: Any) -> Any:
    event = load_event("message_post")
    event["body"] = json.dumps({"message": text, **fields}, ensure_ascii=False)
    event["headers"]["content-length"] = str(len(event["body"].encode()))
    if api_key is not None:
        event["headers"]["x-api-key"] = api_key
    response = lambdas.invoke("message", event)
    assert response["statusCode"] == 200, response["body"]
    return body(response)


def test_two_customers_whose_ids_share_no_ascii_get_two_sessions_and_no_shared_history(
    lambdas: Lambdas,
) -> None:
    model = ModelInputs(lambdas)
    first = send(lambdas, "hello, this is 张三 about parcel ZS-771", customerId="张三")
    assert "ZS-771" in model.take()

    other = send(lambdas, "hello, this is 李四", customerId="李四")

    assert other["sessionId"] != first["sessionId"]
    seen = model.take()
    assert "李四" in seen and "ZS-771" not in seen and "张三" not in seen


def test_the_same_customer_continues_their_session_with_its_history(lambdas: Lambdas) -> None:
    model = ModelInputs(lambdas)
    first = send(lambdas, "hello, this is 张三 about parcel ZS-771", customerId="张三")
    model.take()

    again = send(lambdas, "hello again", customerId="张三")

    assert again["sessionId"] == first["sessionId"]
    assert "ZS-771" in model.take(), "the earlier message reached the model"
    status = lambdas.invoke("resolve", load_event("session_status", SESSION_ID=again["sessionId"]))
    assert status["statusCode"] == 200 and body(status)["status"] == "done"


def test_one_customer_id_in_two_tenants_is_two_sessions(lambdas: Lambdas) -> None:
    clear, key = new_api_key("acme-corp", "test", time.time())
    lambdas.api.api_keys.add(key)
    model = ModelInputs(lambdas)
    anonymous = send(lambdas, "hello from the default tenant, ref DF-1", customerId="C-42")
    model.take()

    acme = send(lambdas, "hello from acme", api_key=clear, customerId="C-42")

    assert acme["sessionId"] != anonymous["sessionId"]
    assert "DF-1" not in model.take()


def test_the_session_id_reveals_nothing_of_the_value(lambdas: Lambdas) -> None:
    done = send(lambdas, "hello", customerId="alice@example.com")

    key_name, digest = done["sessionId"].split("-", 1)
    assert key_name == "customerId" and len(digest) == 40
    assert "alice" not in done["sessionId"] and "example" not in done["sessionId"]
