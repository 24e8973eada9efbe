"""The GRPO reward of a trace: 0 unparseable, 0.5 parsed but wrong, 1 right; and the recursion
blend r0' = (1 - d)·r0 + d·r1 that credits a round partly with how its re-plan did (training's
recursion rows use it)."""

from __future__ import annotations

from conductor.trace import Trace

REWARD_UNPARSEABLE = 0.0
REWARD_WRONG = 0.5
REWARD_RIGHT = 1.0
DEFAULT_RECURSION_DISCOUNT = 0.25  # the paper's factor (its reported code uses 0.2)


def reward_of(trace: Trace) -> float:
    if trace.parse_status != "ok" or trace.workflow is None:
        return REWARD_UNPARSEABLE
    if trace.verdict is not None and trace.verdict.correct:
        return REWARD_RIGHT
    return REWARD_WRONG


def blend(first: float, second: float, discount: float = DEFAULT_RECURSION_DISCOUNT) -> float:
    """A round that recursed is credited partly with how the next round did."""
    if not 0.0 <= discount <= 1.0:
        raise ValueError(f"discount must be in [0, 1], got {discount}")
    return (1.0 - discount) * first + discount * second
