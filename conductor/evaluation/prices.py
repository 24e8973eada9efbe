"""How old a run's prices are. The price table dates each entry (`PriceEntry.checked`); a
pool file's own `prices:` carry the file's `prices_checked:` date (undated without one)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date

from conductor.types import WorkerSpec
from conductor.workers.pricing import lookup

DEFAULT_MAX_AGE_DAYS = 180


def price_dates(specs: Sequence[WorkerSpec], pool_checked: date | str | None = None) -> dict[str, str | None]:
    """worker id -> ISO date its price was checked: the price table's date, or for prices given in
    the pool file the file's `prices_checked` (None: undated, or no price known)."""
    out: dict[str, str | None] = {}
    for spec in specs:
        if spec.prices is not None:
            out[spec.id] = str(pool_checked) if pool_checked else None
            continue
        entry = lookup(spec.model) if spec.model else None
        out[spec.id] = entry.checked if entry else None
    return out


def pool_price_dates(pool: object) -> dict[str, str | None]:
    """`price_dates` of a PoolFile's workers (the Conductor entry included)."""
    return price_dates(pool.workers, pool.prices_checked)  # type: ignore[attr-defined]


def stale_prices(dates: Mapping[str, str | None], today: date, max_age_days: int = DEFAULT_MAX_AGE_DAYS) -> str | None:
    """One warning line when some dated price is older than `max_age_days`, else None."""
    old = sorted((d, w) for w, d in dates.items() if d and (today - date.fromisoformat(d)).days > max_age_days)
    if not old:
        return None
    oldest, _ = old[0]
    return (f"warning: prices of {', '.join(w for _, w in old)} were checked on {oldest} or later,"
            f" {(today - date.fromisoformat(oldest)).days} days ago (> {max_age_days}): re-check the price table"
            " (conductor/workers/pricing.py) before reporting these dollars")
