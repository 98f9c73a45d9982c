"""A stand-in for ``snapshot_restore_py``, the SnapStart runtime hooks of Lambda's python runtimes.

Lambda's python3.13 runtime has ``snapshot_restore_py`` on its path, and its bootstrap
(``awslambdaric``) runs what was registered there: the before-snapshot hooks in the
reverse order of registration once init is done, the after-restore hooks in order
in every execution environment restored from the snapshot, before its first
invocation. Elsewhere (the local stack, the tests, a laptop) that module is not
importable, so ``signoff.aws.snapstart`` registers here instead: the same two
functions, and the two runners a test calls to play a snapshot and a restore. Nothing
else runs them: outside Lambda no environment is ever restored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "register_after_restore",
    "register_before_snapshot",
    "run_after_restore",
    "run_before_snapshot",
]

_Hook = tuple["Callable[..., Any]", tuple[Any, ...], dict[str, Any]]

_before_snapshot: list[_Hook] = []
_after_restore: list[_Hook] = []


def register_before_snapshot(
    func: Callable[..., Any], *args: Any, **kwargs: Any
) -> Callable[..., Any]:
    """Call ``func(*args, **kwargs)`` before the snapshot is taken; ``func`` is returned."""
    _before_snapshot.append((func, args, kwargs))
    return func


def register_after_restore(
    func: Callable[..., Any], *args: Any, **kwargs: Any
) -> Callable[..., Any]:
    """Call ``func(*args, **kwargs)`` in each restored environment; ``func`` is returned."""
    _after_restore.append((func, args, kwargs))
    return func


def run_before_snapshot() -> None:
    """What the runtime does once init is done: the hooks, last registered first."""
    for func, args, kwargs in reversed(_before_snapshot):
        func(*args, **kwargs)


def run_after_restore() -> None:
    """What the runtime does in a restored environment: the hooks, in registration order."""
    for func, args, kwargs in _after_restore:
        func(*args, **kwargs)
