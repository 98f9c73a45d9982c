"""Changes to ``os.environ`` that can be taken back: the local stack exports its functions'
environment into this process and restores what was there when it stops."""

from __future__ import annotations

import os

__all__ = ["EnvironmentChanges"]


class EnvironmentChanges:
    """``os.environ`` changes that ``restore`` takes back."""

    def __init__(self) -> None:
        self._saved: dict[str, str | None] = {}

    def set(self, name: str, value: str | None) -> None:
        self._saved.setdefault(name, os.environ.get(name))
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value

    def restore(self) -> None:
        for name, value in self._saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved.clear()
