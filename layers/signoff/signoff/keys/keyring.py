"""A signer whose key set follows its secret while the function stays warm.

A rotation (docs/deploying.md, "What the template creates") writes a new key set
into the signing secret.
A warm resolve function that kept the set of its cold start would refuse every
link signed with the new key, and keep accepting a key that was dropped. The
``RotatingSigner`` reads the set again:

- every ``max_age`` seconds, on the next use: a new current key starts signing,
  a dropped key stops verifying, at most ``max_age`` after the secret changed;
- at once when a token names a key id it does not hold (a link signed by a
  function that already saw the rotation), but at most once per
  ``min_refresh`` seconds whatever the id: a flood of made-up key ids costs at
  most one read of the secret per interval, never one per request.

A failed read keeps the set held: a throttled Secrets Manager or a mistyped new
value must not turn every link into 403. The reads go past the secret source's
own cache (``fresh``), so these intervals are the only ones that count.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Final

from signoff.errors import SecretMissing, StoreUnavailable
from signoff.keys.tokens import RESUME_SIGNING_SECRET, KeySet, Signer, read_key_set

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.clock import Clock
    from signoff.secrets.base import SecretSource

__all__ = ["KEYS_MAX_AGE", "KEYS_MIN_REFRESH", "RotatingSigner", "rotating_signer"]

# How long a dropped key keeps verifying on a warm function, at most.
KEYS_MAX_AGE: Final = 300.0
# The least time between two reads caused by unknown key ids.
KEYS_MIN_REFRESH: Final = 30.0

log = logging.getLogger(__name__)


class RotatingSigner(Signer):
    """Signs with the secret's current key, verifies with its listed ones; re-reads the set."""

    def __init__(
        self,
        read: Callable[[], KeySet],
        clock: Clock,
        *,
        max_age: float = KEYS_MAX_AGE,
        min_refresh: float = KEYS_MIN_REFRESH,
    ) -> None:
        """Hold the key set ``read()`` gives now; read it again as the module says.

        Raises:
            SecretMissing: the first read finds no usable key set.
            StoreUnavailable: the first read failed transiently.
        """
        first = read()
        super().__init__(first.keys, first.current)
        self._read = read
        self._clock = clock
        self.max_age = max_age
        self.min_refresh = min_refresh
        self._read_at = clock.monotonic()
        self._unknown_read_at: float | None = None
        # One reader at a time; the others go on with the set held.
        self._reading = threading.Lock()

    def _keys_now(self) -> KeySet:
        if self._clock.monotonic() - self._read_at >= self.max_age:
            self._read_again()
        return self._key_set

    def _key_for(self, key_id: str) -> bytes | None:
        key = self._keys_now().keys.get(key_id)
        if key is None and self._may_read_for_unknown_id():
            self._read_again()
            key = self._key_set.keys.get(key_id)
        return key

    def _may_read_for_unknown_id(self) -> bool:
        # Counted per interval, not per id: ids are the attacker's to choose.
        now = self._clock.monotonic()
        if self._unknown_read_at is not None and now - self._unknown_read_at < self.min_refresh:
            return False
        self._unknown_read_at = now
        return True

    def _read_again(self) -> None:
        if not self._reading.acquire(blocking=False):
            return
        try:
            # Stamped before the read: a failing source is asked again after
            # max_age, not on every request meanwhile.
            self._read_at = self._clock.monotonic()
            self._key_set = self._read()
        except (SecretMissing, StoreUnavailable) as exc:
            log.warning("re-reading the signing keys failed (%s); kept", type(exc).__name__)
        finally:
            self._reading.release()


def rotating_signer(
    secrets: SecretSource,
    clock: Clock,
    *,
    name: str = RESUME_SIGNING_SECRET,
    max_age: float = KEYS_MAX_AGE,
    min_refresh: float = KEYS_MIN_REFRESH,
) -> RotatingSigner:
    """The deployment's signer: the key set of the secret ``name``, read past any cache.

    Raises:
        SecretMissing: the secret is absent, or its value is not a usable key set.
        StoreUnavailable: the secret source failed transiently.
    """
    return RotatingSigner(
        lambda: read_key_set(secrets, name, fresh=True),
        clock,
        max_age=max_age,
        min_refresh=min_refresh,
    )
