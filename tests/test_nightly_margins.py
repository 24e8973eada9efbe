"""The nightly summary's margins: the challenger's held-out accuracy minus each other method's on
the same questions, with the paired bootstrap's one-sided lower bound (registry/promotion.py)."""

from __future__ import annotations

from registry.promotion import GateConfig, Outcomes, challenger_margin


def _outcomes(correct: dict[str, bool]) -> Outcomes:
    return Outcomes(correct=correct, cost_usd=dict.fromkeys(correct, 0.01))


def test_a_challenger_right_where_the_other_is_wrong_wins_with_confidence() -> None:
    ids = [f"q{i}" for i in range(40)]
    challenger = _outcomes({i: n < 30 for n, i in enumerate(ids)})  # 30 of 40
    other = _outcomes({i: n < 10 for n, i in enumerate(ids)})  # 10 of 40, a subset of the challenger's
    margin = challenger_margin(challenger, other, GateConfig())
    assert margin is not None and margin.diff == 0.5
    assert 0.3 < margin.low < 0.5  # 20 wins, no loss: the bound is well above 0, below the difference
    behind = challenger_margin(other, challenger, GateConfig())
    assert behind is not None and behind.diff == -0.5 and behind.low < -0.5


def test_a_tie_has_a_lower_bound_below_zero_and_only_shared_questions_count() -> None:
    ids = [f"q{i}" for i in range(40)]
    challenger = _outcomes({i: n % 2 == 0 for n, i in enumerate(ids)})
    other = _outcomes({i: n % 2 == 1 for n, i in enumerate(ids)} | {"extra": False})
    margin = challenger_margin(challenger, other, GateConfig())
    assert margin is not None and margin.diff == 0.0 and margin.low < 0
    assert challenger_margin(challenger, _outcomes({"elsewhere": True}), GateConfig()) is None
