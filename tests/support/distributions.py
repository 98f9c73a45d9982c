"""An installed distribution, faked: a ``.dist-info`` folder on ``sys.path`` declaring entry points.

``importlib.metadata`` finds it as it finds a ``pip install``-ed package, so a
test reaches a plug-in through the same lookup a deployment uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

__all__ = ["install"]


def install(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    entry_points: str,
    *,
    name: str = "signoff-inbox",
) -> None:
    """A distribution ``name`` on sys.path declaring ``entry_points`` (entry_points.txt text)."""
    folder = name.replace("-", "_")
    dist = tmp_path / "site" / f"{folder}-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(entry_points)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
