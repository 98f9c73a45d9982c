"""The ``signoff`` command line."""

from signoff.cli.main import main

__all__ = ["main"]
