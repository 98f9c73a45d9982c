"""Secrets from environment variables: the local stack and tests."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from signoff.errors import SecretMissing

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["EnvSecrets", "variable_name"]

DEFAULT_PREFIX = "SIGNOFF_SECRET_"


def variable_name(name: str, prefix: str = DEFAULT_PREFIX) -> str:
    """The variable that holds ``name``: ``resume-signing`` → ``SIGNOFF_SECRET_RESUME_SIGNING``."""
    return prefix + re.sub(r"[^A-Za-z0-9]", "_", name).upper()


class EnvSecrets:
    """Each secret in its own variable, ``prefix`` plus the name in upper snake case."""

    def __init__(
        self, prefix: str = DEFAULT_PREFIX, environ: Mapping[str, str] | None = None
    ) -> None:
        self.prefix = prefix
        # Read at each get(), not copied: a test or a local reload may change the variable.
        self._environ = environ if environ is not None else os.environ

    def get(self, name: str, *, fresh: bool = False) -> str:
        """The value of ``name``'s variable (always read now, so ``fresh`` changes nothing).

        Raises:
            SecretMissing: the variable is unset or empty.
        """
        variable = variable_name(name, self.prefix)
        value = self._environ.get(variable)
        if not value:
            raise SecretMissing(name, f"environment variable {variable} is not set")
        return value
