"""What a channel must do, as checks a third-party channel can run: ``signoff.testing``.

::

    from signoff.testing import CHANNEL_CHECKS

    @pytest.mark.parametrize("check", CHANNEL_CHECKS.values(), ids=CHANNEL_CHECKS.keys())
    def test_my_channel(check):
        check(MyHarness())  # a fresh channel and service per check

or ``check_channel(MyHarness)`` to run them all. Plain functions that raise
``AssertionError``: no test framework is imported (the engine layer ships
without pytest). See ``signoff.testing.channels``.
"""

from signoff.testing.channels import (
    CHANNEL_CHECKS,
    ChannelHarness,
    channel_key,
    check_channel,
    sample_approval,
)

__all__ = ["CHANNEL_CHECKS", "ChannelHarness", "channel_key", "check_channel", "sample_approval"]
