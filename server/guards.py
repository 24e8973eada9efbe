"""Bearer keys (held hashed, compared in constant time) and per-key concurrency and rate limits."""

from __future__ import annotations

import hashlib
import hmac
import math
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

KEYS_ENV = "CONDUCTOR_SERVE_API_KEYS"


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


class KeyRing:
    """The accepted keys, as SHA-256 digests only: the plain keys are not kept in memory."""

    def __init__(self, keys: Iterable[str]) -> None:
        self._digests = [_digest(k) for k in (k.strip() for k in keys) if k]

    @classmethod
    def load(cls, env_value: str | None, keys_file: Path | None) -> KeyRing:
        keys = (env_value or "").split(",")
        if keys_file is not None:
            keys += [line.strip() for line in keys_file.read_text().splitlines() if not line.startswith("#")]
        return cls(keys)

    def __len__(self) -> int:
        return len(self._digests)

    def identify(self, presented: str) -> str | None:
        """A short id of the matching key (a prefix of its digest, safe to log), or None.
        Every stored digest is compared, so the time taken does not tell which one matched."""
        d = _digest(presented)
        found = None
        for stored in self._digests:
            if hmac.compare_digest(stored, d):
                found = stored
        return found.hex()[:12] if found is not None else None


@dataclass
class _Bucket:
    tokens: float
    stamp: float
    in_flight: int = 0


@dataclass
class Limits:
    """Token-bucket rate (`per_minute`, `burst`) and a concurrency cap, per key."""

    per_minute: float
    burst: int
    concurrency: int
    _buckets: dict[str, _Bucket] = field(default_factory=dict)

    def admit(self, key_id: str) -> float | None:
        """Take a slot for `key_id`: None when admitted, else the seconds to wait (Retry-After)."""
        now = time.monotonic()
        b = self._buckets.setdefault(key_id, _Bucket(tokens=float(self.burst), stamp=now))
        b.tokens = min(float(self.burst), b.tokens + (now - b.stamp) * self.per_minute / 60.0)
        b.stamp = now
        if b.in_flight >= self.concurrency:
            return 1.0
        if b.tokens < 1.0:
            return max(1.0, math.ceil((1.0 - b.tokens) * 60.0 / self.per_minute))
        b.tokens -= 1.0
        b.in_flight += 1
        return None

    def release(self, key_id: str) -> None:
        self._buckets[key_id].in_flight -= 1
