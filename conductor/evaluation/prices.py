"""How old a run's prices are. The price table dates each entry (`PriceEntry.checked`); a
pool file's own `prices:` carry the file's `prices_checked:` date (undated without one); `PoolFile.price_dates`
reads both."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date


DEFAULT_MAX_AGE_DAYS = 180


def stale_prices(dates: Mapping[str, str | None], today: date, max_age_days: int = DEFAULT_MAX_AGE_DAYS) -> str | None:
    """One warning line when some dated price is older than `max_age_days`, else None."""
    old = sorted((d, w) for w, d in dates.items() if d and (today - date.fromisoformat(d)).days > max_age_days)
    if not old:
        return None
    oldest, _ = old[0]
    return (f"warning: prices of {', '.join(w for _, w in old)} were checked on {oldest} or later,"
            f" {(today - date.fromisoformat(oldest)).days} days ago (> {max_age_days}): re-check the price table"
            " (conductor/workers/pricing.py) before reporting these dollars")
