"""The shipped simulated pools hold the model's properties: paper-sim.yaml matches the paper's
Table 7 for the closed workers and leaves room for orchestration to beat the per-domain oracle;
local.yaml's workers average their skills and gain from ensembles and verification."""

from __future__ import annotations

from statistics import mean

import pytest

from conductor.data.schema import DOMAINS
from conductor.workers.pool import Pool
from conductor.workers.registry import BuildContext
from conductor.workers.simulated import ProblemBank, SimulatedWorker
from tests.sim_helpers import accuracy, attempt_then_verify, attempts_then_combine
from tests.sim_problems import make_problems

N = 2000
PROBLEMS = make_problems(N, seed=11)
BANK = ProblemBank(PROBLEMS)
BY_DOMAIN = {d: [p for p in PROBLEMS if p.domain == d] for d in DOMAINS}

# The paper's Table 7 (constrained setting), in our domains: MATH500, MMLU, RLPR, LiveCodeBench.
TABLE_7 = {
    "gpt-5": {"math": 74.45, "choice": 89.79, "freeform": 33.13, "code": 57.50},
    "claude-sonnet-4": {"math": 82.90, "choice": 90.66, "freeform": 32.60, "code": 38.00},
    "gemini-2.5-pro": {"math": 85.30, "choice": 91.53, "freeform": 39.57, "code": 40.14},
}


def workers(path: str) -> dict[str, SimulatedWorker]:
    pool = Pool.load(path, BuildContext(bank=BANK))
    found = {i: pool.worker(i) for i in pool.ids}
    assert all(isinstance(w, SimulatedWorker) for w in found.values())
    return found  # type: ignore[return-value]


PAPER = workers("deployments/pools/paper-sim.yaml")
LOCAL = workers("deployments/pools/local.yaml")


def test_paper_sim_closed_workers_are_configured_at_table_7():
    """The YAML's skills are the paper's Table 7 percentages as probabilities, to the digit."""
    for worker_id, figures in TABLE_7.items():
        assert PAPER[worker_id].options.skills == {d: round(f / 100, 4) for d, f in figures.items()}, worker_id


@pytest.mark.parametrize("worker_id", list(TABLE_7))
def test_each_closed_worker_alone_lands_within_3_points_of_table_7(worker_id):
    """Sampled, each closed worker alone answers near its Table 7 figure: the simulator turns a
    configured skill into that share of right answers (2000 problems, 500 per domain)."""
    for domain, figure in TABLE_7[worker_id].items():
        measured = 100 * accuracy(PAPER[worker_id], BY_DOMAIN[domain])
        assert measured == pytest.approx(figure, abs=3.0), (worker_id, domain, measured)


def test_orchestration_can_beat_the_per_domain_oracle_of_paper_sim():
    """The paper's Conductor (72.35) beat the per-domain oracle (68.5) through verification and
    ensembles: here the best worker of each domain, asked three times and combined, beats it."""
    oracle, ensemble = [], []
    for domain in DOMAINS:
        ps = BY_DOMAIN[domain][:1000]
        best_id = max(TABLE_7, key=lambda w: TABLE_7[w][domain])
        best = PAPER[best_id]
        oracle.append(accuracy(best, ps))
        ensemble.append(mean(attempts_then_combine([best, best, best], best, p) for p in ps))
    assert mean(ensemble) > mean(oracle) + 0.02


@pytest.mark.parametrize("worker_id", ["sim-generalist", "sim-coder", "sim-mathematician", "sim-small"])
def test_each_local_worker_alone_averages_its_skill(worker_id):
    w = LOCAL[worker_id]
    for domain in DOMAINS:
        assert accuracy(w, BY_DOMAIN[domain]) == pytest.approx(w.options.skills[domain], abs=0.035), domain


@pytest.mark.parametrize("domain", DOMAINS)
def test_local_ensembles_and_verification_help(domain):
    ps = BY_DOMAIN[domain][:1000]
    best = max(LOCAL.values(), key=lambda w: w.options.skills[domain])
    one = accuracy(best, ps)
    assert mean(attempts_then_combine([best, best, best], best, p) for p in ps) > one + 0.03
    assert mean(attempt_then_verify(best, best, p) for p in ps) > one + 0.01


def test_a_training_pools_repeat_draws_other_dice_on_the_same_problems():
    """`training_pool(repeat=r)` gives the simulated workers an evaluation repeat's dice (the
    recursion benchmark's `--dice`): repeat 0 is the pool as written, call for call; another
    repeat answers some of the same calls differently, at the same skill."""
    from conductor.training.dataset import CONDUCTOR_ID, training_pool
    from tests.sim_helpers import decide, on_topic

    problems = PROBLEMS[:400]

    def outcomes(**repeat: int) -> list[bool]:
        pool = training_pool("deployments/pools/local.yaml", problems, latency_scale=0.0, **repeat)
        assert CONDUCTOR_ID in pool.ids  # the Conductor is offered, whatever the dice
        worker = pool.worker("sim-generalist")
        return [decide(worker, p, on_topic(p)).right for p in problems]

    written, again, other = outcomes(), outcomes(repeat=0), outcomes(repeat=1)
    assert written == again
    assert sum(a != b for a, b in zip(written, other)) > 20
    assert abs(mean(written) - mean(other)) < 0.08
