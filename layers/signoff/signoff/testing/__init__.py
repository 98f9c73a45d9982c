"""What a channel must do, as checks a third-party channel can run: ``signoff.testing``.

::

    from signoff.testing import CHANNEL_CHECKS

    @pytest.mark.parametrize("check", CHANNEL_CHECKS.values(), ids=CHANNEL_CHECKS.keys())
    def test_my_channel(check):
        check(MyHarness())  # a fresh channel and service per check

or ``check_channel(MyHarness)`` to run them all. Plain functions that raise
``AssertionError``: no test framework is imported (the engine layer ships
without pytest). See ``signoff.testing.channels``.

``replay_rules(store, agent, rules, since=…)`` decides a store's recorded tool
calls again with new rules, so a CI test can assert what a rules change does
(``signoff.testing.rules``).
"""

from signoff.testing.channels import (
    CHANNEL_CHECKS,
    ChannelHarness,
    channel_key,
    check_channel,
    sample_approval,
)
from signoff.testing.rules import Replay, replay_rules

__all__ = [
    "CHANNEL_CHECKS",
    "ChannelHarness",
    "Replay",
    "channel_key",
    "check_channel",
    "replay_rules",
    "sample_approval",
]
