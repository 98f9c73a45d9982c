"""The ``signoff`` command line."""

from signoff_dev.cli.main import main

__all__ = ["main"]
