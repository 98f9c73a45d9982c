"""The console channel's settings (``type: console``, implicit as ``console``)."""

from typing import Literal

from signoff.channels.config import ChannelSettings

__all__ = ["ConsoleSettings"]


class ConsoleSettings(ChannelSettings):
    """One line per notification on stdout, or to the ``signoff.console`` logger."""

    type: Literal["console"]
    output: Literal["stdout", "log"] = "stdout"
    # The confirmation page's link carries a resume token, and a line lands in a log
    # (deployed: CloudWatch), which must hold no token: shown only when asked for.
    links: bool = False
