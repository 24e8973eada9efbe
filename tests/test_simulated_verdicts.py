"""The simulated pool's verdict cache is bounded: an LRU of `SIMULATED_VERDICTS_KEPT` verdicts
(conductor/workers/simulated/answers.py), so a long run's distinct answers do not grow it."""

from __future__ import annotations

from conductor.data.schema import Problem
from conductor.verify.memo import VerdictCache
from conductor.workers.simulated import answers

PROBLEM = Problem(id="p", source="synthetic", domain="math", question="What is 6 * 7?", answer="42")


def test_the_cache_keeps_at_most_its_size_and_forgets_the_oldest(monkeypatch) -> None:
    cache = VerdictCache(maxsize=2)
    monkeypatch.setattr(answers, "SIMULATED_VERDICTS", cache)
    assert [answers.verdict_of(PROBLEM, v) for v in ("42", "41", "40")] == [True, False, False]
    assert len(cache) == 2  # "42", the oldest, is gone
    assert answers.verdict_of(PROBLEM, "40") is False and cache.hits == 1  # the newest is kept
    assert answers.verdict_of(PROBLEM, "42") is True and cache.misses == 4  # the oldest is graded again


def test_the_process_cache_is_bounded_by_its_documented_size() -> None:
    assert isinstance(answers.SIMULATED_VERDICTS, VerdictCache)
    assert answers.SIMULATED_VERDICTS.maxsize == answers.SIMULATED_VERDICTS_KEPT == 8192
