"""The session lease a function's turns take: its timeout plus a margin, or SIGNOFF_CLAIM_TTL_MS."""

from __future__ import annotations

import pytest

from signoff.errors import UsageError
from signoff.settings import LAMBDA_MAX_TIMEOUT, LEASE_MARGIN, Deployment


@pytest.mark.parametrize(
    ("environ", "lease"),
    [
        ({"SIGNOFF_FUNCTION_TIMEOUT": "300"}, 300 + LEASE_MARGIN),
        ({"SIGNOFF_FUNCTION_TIMEOUT": "60"}, 60 + LEASE_MARGIN),
        # the seed's claimTtlMs, set instead of derived
        ({"SIGNOFF_FUNCTION_TIMEOUT": "60", "SIGNOFF_CLAIM_TTL_MS": "90000"}, 90.0),
        ({"SIGNOFF_CLAIM_TTL_MS": "2500"}, 2.5),
        # a function that does not say its timeout may run Lambda's longest
        ({}, LAMBDA_MAX_TIMEOUT + LEASE_MARGIN),
        ({"SIGNOFF_CLAIM_TTL_MS": ""}, LAMBDA_MAX_TIMEOUT + LEASE_MARGIN),
    ],
)
def test_the_lease_derives_from_the_function_timeout(environ: dict[str, str], lease: float) -> None:
    assert Deployment.from_env(environ).lease_seconds == lease


@pytest.mark.parametrize(
    ("environ", "variable"),
    [
        # a lease the function outlives would let a second process take a live turn
        ({"SIGNOFF_FUNCTION_TIMEOUT": "300", "SIGNOFF_CLAIM_TTL_MS": "300000"}, "CLAIM_TTL_MS"),
        ({"SIGNOFF_FUNCTION_TIMEOUT": "901"}, "SIGNOFF_FUNCTION_TIMEOUT"),
        ({"SIGNOFF_FUNCTION_TIMEOUT": "0"}, "SIGNOFF_FUNCTION_TIMEOUT"),
        ({"SIGNOFF_CLAIM_TTL_MS": "soon"}, "SIGNOFF_CLAIM_TTL_MS"),
    ],
)
def test_an_invalid_lease_setting_is_refused_naming_it(
    environ: dict[str, str], variable: str
) -> None:
    with pytest.raises(UsageError, match=variable):
        Deployment.from_env(environ)
