"""signoff.client: an error answer becomes the project's exception, by its status."""

from __future__ import annotations

import httpx
import pytest

from signoff.client import error_for
from signoff.errors import (
    Absent,
    BadInput,
    Conflict,
    Forbidden,
    Gone,
    SignoffError,
    Unauthorized,
    Unavailable,
)


@pytest.mark.parametrize(
    ("status", "family"),
    [
        (400, BadInput),
        (401, Unauthorized),
        (403, Forbidden),
        (404, Absent),
        (405, BadInput),
        (409, Conflict),
        (410, Gone),
        (413, BadInput),
        (422, BadInput),
        (500, Unavailable),
        (502, Unavailable),
        (503, Unavailable),
    ],
)
def test_an_error_answer_is_its_family_with_the_apis_detail(
    status: int, family: type[SignoffError]
) -> None:
    response = httpx.Response(status, json={"error": "some_code", "detail": "what went wrong"})
    error = error_for(response)
    assert type(error) is family
    assert str(error) == f"some_code: what went wrong (HTTP {status})"


def test_a_gateways_own_answer_keeps_its_message() -> None:
    error = error_for(httpx.Response(404, json={"message": "Not Found"}))
    assert isinstance(error, Absent) and str(error) == "Not Found (HTTP 404)"
    assert isinstance(error_for(httpx.Response(504, text="<html>")), Unavailable)
