"""What the planning sweeper reads of its deployment (``signoff.settings.variables``):
the same values as ``Deployment`` reads, without importing pydantic."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from signoff.errors import UsageError
from signoff.settings import Deployment, SweepPlanning
from signoff.settings.variables import MAX_SHARDS, shard_count

QUEUE = "https://sqs.us-east-1.amazonaws.com/123456789012/signoff-SweepQueue"

# Texts a shard count may be given as: digits in the shapes a Number parameter takes,
# and what must be refused beside them.
shard_texts = st.one_of(
    st.integers(min_value=-3, max_value=MAX_SHARDS + 3).map(str),
    st.integers(min_value=0, max_value=10**30).map(str),
    st.builds(lambda n, zeros: f"{n}.{'0' * zeros}", st.integers(0, 99), st.integers(0, 3)),
    st.builds(lambda n: f"+{n}", st.integers(0, 99)),
    st.sampled_from(["", " ", "1_2", "1e1", "12.5", "0x1", "\u0661\u0662", "true", "twelve"]),
    st.text(max_size=6),
)


@given(value=shard_texts)
def test_the_planner_reads_the_shard_count_as_the_deployment_does(value: str) -> None:
    environ = {"SIGNOFF_SWEEP_SHARDS": value, "SIGNOFF_SWEEP_QUEUE_URL": QUEUE}
    try:
        expected = Deployment.from_env(environ)
    except UsageError:
        with pytest.raises(UsageError, match="SIGNOFF_SWEEP_SHARDS"):
            SweepPlanning.from_env(environ)
        return
    planning = SweepPlanning.from_env(environ)
    assert (planning.queue_url, planning.shards) == (
        expected.sweep_queue_url,
        expected.sweep_shards,
    )


def test_unset_or_blank_variables_take_the_defaults() -> None:
    for environ in ({}, {"SIGNOFF_SWEEP_SHARDS": " ", "SIGNOFF_SWEEP_QUEUE_URL": ""}):
        planning = SweepPlanning.from_env(environ)
        deployment = Deployment.from_env(environ)
        assert (
            (planning.queue_url, planning.shards)
            == (None, 12)
            == (
                deployment.sweep_queue_url,
                deployment.sweep_shards,
            )
        )


@pytest.mark.parametrize("value", [0, -1, True, 2.0, None, "4.5", 1001, "1" + "0" * 20, "9" * 5000])
def test_a_shard_count_is_a_whole_number_from_one_to_a_thousand(value: object) -> None:
    with pytest.raises(ValueError, match="whole number from 1 to 1000"):
        shard_count(value)
    assert shard_count(1000) == shard_count("1000") == 1000


def test_the_planning_path_imports_no_pydantic() -> None:
    code = (
        "import sys\n"
        "from signoff.aws.sweep_schedule import scheduled_sweep\n"
        "scheduled_sweep()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic'))\n"
    )
    env = {"SIGNOFF_SWEEP_QUEUE_URL": QUEUE, "AWS_DEFAULT_REGION": "us-east-1", "PATH": ""}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    # and the same process without a sweep queue builds the whole sweep, pydantic and all
    control = code.replace("scheduled_sweep()", "import signoff.settings.deployment")
    done = subprocess.run(
        [sys.executable, "-c", control], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "'pydantic'" in done.stdout
