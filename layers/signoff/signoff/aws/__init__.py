"""Wiring signoff to AWS: the composition root of the Lambda functions."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["agents_dir"]


def agents_dir() -> Path:
    """Where the agents layer is: ``SIGNOFF_AGENTS_DIR``, else Lambda's ``/opt``."""
    return Path(os.environ.get("SIGNOFF_AGENTS_DIR", "/opt"))
