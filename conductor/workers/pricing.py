"""What a call cost: a dated table of list prices (USD per 1M tokens) and `cost_of`.

Prices change; each entry says when it was checked. A pool file's `prices:` overrides the
table. A model with no known price costs `None` (unknown), never 0: an unknown price must
not look free. Self-served open models have no list price: give one in the pool file
(e.g. your GPU-hour cost spread over tokens) if you want them counted."""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass

from conductor.types import Prices, Usage, WorkerSpec

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PriceEntry:
    prices: Prices
    checked: str  # ISO date the list price was read from the provider's pricing page
    note: str = ""


def _p(inp: float, out: float, cached: float | None, checked: str, note: str = "") -> PriceEntry:
    return PriceEntry(Prices(input=inp, output=out, cached_input=cached), checked, note)


# Standard (non-batch) tier list prices as published by each provider. Re-check before
# reporting costs; the date is when each row was last compared with the pricing page.
PRICE_TABLE: dict[str, PriceEntry] = {
    # OpenAI
    "gpt-5": _p(1.25, 10.0, 0.125, "2025-09-15"),
    "gpt-5-mini": _p(0.25, 2.0, 0.025, "2025-09-15"),
    "gpt-5-nano": _p(0.05, 0.40, 0.005, "2025-09-15"),
    "gpt-4.1": _p(2.0, 8.0, 0.50, "2025-09-15"),
    "gpt-4.1-mini": _p(0.40, 1.60, 0.10, "2025-09-15"),
    "gpt-4.1-nano": _p(0.10, 0.40, 0.025, "2025-09-15"),
    "gpt-4o": _p(2.50, 10.0, 1.25, "2025-09-15"),
    "gpt-4o-mini": _p(0.15, 0.60, 0.075, "2025-09-15"),
    "o3": _p(2.0, 8.0, 0.50, "2025-09-15"),
    "o4-mini": _p(1.10, 4.40, 0.275, "2025-09-15"),
    # Anthropic (cached = cache reads; cache writes are billed at input x1.25 and counted as input)
    "claude-sonnet-4": _p(3.0, 15.0, 0.30, "2025-09-15", "prompts <= 200k tokens"),
    "claude-sonnet-4-5": _p(3.0, 15.0, 0.30, "2025-09-30", "prompts <= 200k tokens"),
    "claude-opus-4-1": _p(15.0, 75.0, 1.50, "2025-09-15"),
    "claude-opus-4": _p(15.0, 75.0, 1.50, "2025-09-15"),
    "claude-haiku-4-5": _p(1.0, 5.0, 0.10, "2025-10-15"),
    "claude-3-5-haiku": _p(0.80, 4.0, 0.08, "2025-09-15"),
    # Google (Gemini API, paid tier; thinking tokens are billed as output)
    "gemini-2.5-pro": _p(1.25, 10.0, 0.31, "2025-09-15", "prompts <= 200k tokens"),
    "gemini-2.5-flash": _p(0.30, 2.50, 0.075, "2025-09-15"),
    "gemini-2.5-flash-lite": _p(0.10, 0.40, 0.025, "2025-09-15"),
}

# A dated snapshot or alias of a listed model costs the same: claude-sonnet-4-20250514,
# gpt-5-2025-08-07, gpt-4o-latest, gemini-2.5-pro-001.
_SUFFIX = re.compile(r"^(?:-\d{4}-\d{2}-\d{2}|-\d{8}|-latest|-\d{3}|@[\w.-]+)?$")


def lookup(model: str) -> PriceEntry | None:
    """The table entry for a model name (case-insensitive, `vendor/` prefix ignored)."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    best: str | None = None
    for key in PRICE_TABLE:
        if name.startswith(key) and _SUFFIX.match(name[len(key):]) and (best is None or len(key) > len(best)):
            best = key
    return PRICE_TABLE[best] if best else None


def prices_for(spec: WorkerSpec) -> Prices | None:
    if spec.prices is not None:
        return spec.prices
    entry = lookup(spec.model) if spec.model else None
    return entry.prices if entry else None


_warned: set[str] = set()
_warned_lock = threading.Lock()


def cost_of(spec: WorkerSpec, usage: Usage) -> float | None:
    """USD for one call, or None when the model's price is unknown (warned once per model)."""
    prices = prices_for(spec)
    if prices is None:
        key = spec.model or spec.id
        with _warned_lock:
            first = key not in _warned
            _warned.add(key)
        if first:
            log.warning(
                "no price known for model %r (worker %r): its cost is recorded as unknown;"
                " add `prices: {input: ..., output: ...}` (USD per 1M tokens) to the pool file",
                key,
                spec.id,
            )
        return None
    return prices.cost(usage.input_tokens, usage.output_tokens, usage.cached_input_tokens)
