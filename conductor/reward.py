"""The GRPO reward of a trace: 0 unparseable, 0.5 parsed but wrong, 1 right."""

from __future__ import annotations

from conductor.trace import Trace

REWARD_UNPARSEABLE = 0.0
REWARD_WRONG = 0.5
REWARD_RIGHT = 1.0


def reward_of(trace: Trace) -> float:
    if trace.parse_status != "ok" or trace.workflow is None:
        return REWARD_UNPARSEABLE
    if trace.verdict is not None and trace.verdict.correct:
        return REWARD_RIGHT
    return REWARD_WRONG
