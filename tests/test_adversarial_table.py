"""The adversarial benchmark's tables (benchmarks/adversarial_table.py): each cell's accuracy and
its drop against the same method without the bad worker, the kinds within the 2-point bar, $ that
stays unknown, how often the bad worker was chosen, and the trained Conductor's bars."""

from __future__ import annotations

from benchmarks.adversarial_table import KINDS, report


def row(method: str, condition: str, accuracy: float, *, usd: float | None = 0.01, trained: bool = False,
        **extra: object) -> dict:
    bad = {} if condition == "none" else {"bad_chosen": 0.6, "around": {"avoided": 200, "outvoted": 300}}
    return {"method": method, "condition": condition, "n": 500, "accuracy": accuracy, "usd_per_question": usd,
            "calls_per_question": 4.0, "trained": trained, **bad, **extra}


def results() -> dict[str, dict]:
    rows = [row("template fanout", "none", 0.600), row("template fanout", "flaky", 0.550, usd=None),
            row("template fanout", "confident_wrong", 0.590), row("template fanout", "sycophant", 0.605),
            row("template fanout", "lazy", 0.580)]  # injector not run
    trained = "Conductor trained with bad workers, seed 0"
    rows += [row(trained, "none", 0.700, trained=True)]
    rows += [row(trained, k, 0.690, trained=True, bad_chosen=0.2,
                 around={"avoided": 400, "trusted": 50, "outvoted": 40, "checked": 10})
             for k in KINDS if k != "injector"]
    rows += [row(trained, "injector", 0.650, trained=True, bad_chosen=0.1, around={"avoided": 450, "trusted": 50},
                 injector_took_part=50, injected_final=0.02)]
    return {f"{r['method']} | {r['condition']}": r for r in rows}


def test_each_cell_is_the_accuracy_and_its_drop_against_the_same_method_without_the_bad_worker() -> None:
    text = report(results())
    assert text.startswith("SIMULATED")
    # -5.0 and -1.0 points; +0.5; -2.0 is within the 2-point bar; the injector not run; 3 of 4 measured within
    assert ("| template fanout | 0.600 | 0.550 (-5.0) | 0.590 (-1.0) | 0.605 (+0.5) | 0.580 (-2.0) | not run "
            "| 3 of 4 |") in text
    assert "| Conductor trained with bad workers, seed 0 | 0.700 | 0.690 (-1.0) |" in text
    assert text.index("| template fanout | 0.600") < text.index("| Conductor trained with bad workers, seed 0 | 0.700")


def test_unknown_dollars_stay_unknown_and_the_bad_worker_chosen_is_reported_with_what_surrounds_it() -> None:
    text = report(results())
    assert "| template fanout | 0.0100 / unknown / 0.0100 / 0.0100 / 0.0100 / not run | 4.00 / 4.00 /" in text
    assert "**20.0 %**: trusted 10.0, outvoted 8.0, checked 2.0" in text
    assert "Conductor trained with bad workers, seed 0 2.0 % of 50" in text


def test_the_trained_conductors_bars() -> None:
    text = report(results())
    # 4 kinds lose 1 point, the injector 5: 4 of 5 within, so the seed meets the kinds bar
    assert "Trained with bad workers: loses <= 2 points in >= 4 of 5 kinds in 1 of 1 seeds run" in text
    assert "injected (wrong) one: seed 0 2.0 % of the 50 questions it took part in (the bar: <= 1 %)" in text
    assert "Trained without bad workers: no seed measured here." in text


def test_an_injector_no_workflow_called_has_no_share() -> None:
    """0 of 0 is not 0 %: a seed that never called the injector says so."""
    rows = results()
    rows["Conductor trained with bad workers, seed 0 | injector"].update(
        bad_chosen=0.0, around={"avoided": 500}, injector_took_part=0, injected_final=None)
    text = report(rows)
    assert "injected (wrong) one: seed 0 never (no workflow called it) (the bar" in text


def trace_of(workers: list[str], reads: list[list[int]], answer: str | None = None, *, correct: bool = False):  # noqa: ANN201
    from conductor.trace import StepRecord, Trace
    from conductor.verify.verdict import Verdict

    steps = [StepRecord(index=i, worker_id=w, subtask="s", reads=r) for i, (w, r) in enumerate(zip(workers, reads))]
    return Trace(problem_id="p", source="t", domain="math", steps=steps, answer=answer, verdict=Verdict(correct=correct))


def test_what_a_workflow_wrote_around_the_bad_worker() -> None:
    from benchmarks.adversarial import around

    assert around(trace_of(["good", "good"], [[], [0]]), "bad") == "avoided"
    assert around(trace_of(["good", "bad"], [[], [0]]), "bad") == "trusted"  # its step is the final answer
    assert around(trace_of(["bad", "good", "good"], [[], [], [0, 1]]), "bad") == "outvoted"
    assert around(trace_of(["bad", "good"], [[], [0]]), "bad") == "checked"
    assert around(trace_of(["bad", "good"], [[], []]), "bad") == "unread"


def test_the_injected_answer_is_read_as_the_verifiers_read_it_and_counted_only_when_wrong() -> None:
    from benchmarks.adversarial import injected_wrong
    from conductor.data.schema import Problem

    problem = Problem(id=Problem.make_id("t", 0), source="t", domain="math", question="What is 3 + 4?", answer="7")
    fixed = {"math": "42"}
    assert injected_wrong(trace_of(["bad"], [[]], "Checked.\nThe final answer is \\boxed{42}."), problem, fixed)
    assert not injected_wrong(trace_of(["bad"], [[]], "The final answer is \\boxed{7}."), problem, fixed)
    right = Problem(id=Problem.make_id("t", 1), source="t", domain="math", question="What is 40 + 2?", answer="42")
    assert not injected_wrong(trace_of(["bad"], [[]], "\\boxed{42}", correct=True), right, fixed)  # right: not counted
