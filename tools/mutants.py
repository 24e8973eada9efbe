"""Break the code one line at a time and check that the tests guarding it go red.

Each entry of MUTANTS below is one deliberate bug: a file, text that occurs in it exactly once,
what to put in its place, and the tests that must fail with it. For each one, this script copies
the repository's tracked and untracked (not ignored) files into a temporary directory (the working
tree is never touched), applies the break there, runs the named tests in that copy, puts the
original text back, and prints a table:

    killed    the tests went red: they guard this line
    SURVIVED  the tests stayed green: they would not notice this bug
    STALE     the original text is no longer in the file once (edit the entry)
    ERROR     pytest could not run the tests (exit code other than 0 or 1)

The exit code is 0 only when every mutant run was killed.

    .venv/bin/python tools/mutants.py --list                  # the entries and their tests
    .venv/bin/python tools/mutants.py                         # all of them (tens of minutes)
    .venv/bin/python tools/mutants.py --only weak-rlimit-cpu  # one (or several: repeat --only)
    .venv/bin/python tools/mutants.py --skip-tag sft          # all but the entries tagged "sft"
    .venv/bin/python tools/mutants.py --check-green           # first check the tests pass unbroken

Adding an entry: copy one below, keep `original` to the smallest text that is unique in its file,
and name the test file (or `file::test` to keep the run short) that claims to guard it. See
docs/testing.md for the method this automates.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str  # relative to the repository root
    original: str  # must occur exactly once in the file
    replacement: str
    tests: tuple[str, ...]  # pytest arguments: files or node ids; at least one must fail
    tags: tuple[str, ...] = ()  # e.g. "sft": skipped with --skip-tag sft


MUTANTS: list[Mutant] = [
    # --- issue 25's table -----------------------------------------------------------------------
    Mutant("promotion-flow-sides-swapped", "flows/nightly.py",
           "decide_once(inputs, outcomes[inputs.challenger_spec], outcomes[inputs.champion_spec])",
           "decide_once(inputs, outcomes[inputs.champion_spec], outcomes[inputs.challenger_spec])",
           ("tests/test_nightly.py::test_the_promotion_flow_promotes_the_better_side_and_only_it",)),
    Mutant("gate-always-promotes", "registry/promotion.py",
           "promoted = better and cheap", "promoted = True",
           ("tests/test_nightly.py::test_the_promotion_flow_promotes_the_better_side_and_only_it",)),
    Mutant("heldout-accuracy-zero", "conductor/training/evaluate.py",
           "accuracy=sum(bool(t.verdict and t.verdict.correct) for t in traces) / n,", "accuracy=0.0,",
           ("tests/test_training_grpo.py::test_sft_warm_start_writes_parseable_workflows",)),
    Mutant("local-worker-cannot-generate", "conductor/workers/local.py",
           "        self._engine.submit(call, self)\n",
           "        raise RuntimeError('mutant: cannot generate')\n",
           ("tests/test_serve_guards.py",)),
    Mutant("weak-rlimit-cpu", "conductor/sandbox_launch.py",
           "resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))", "pass",
           ("tests/test_sandbox.py",)),
    Mutant("weak-rlimit-fsize", "conductor/sandbox_launch.py",
           "resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))", "pass",
           ("tests/test_sandbox.py",)),
    # The warm start's data (issue 23 rewrote it: plans and wordings from a library). The
    # issue's own row, "the subject left in every subtask", has no line left to break: subtasks
    # are library wordings now, never built from the problem.
    Mutant("sft-plans-not-uniform", "conductor/training/sft_data.py",
           "plan = rng.choice(list(plans))", "plan = rng.choice(list(plans)[:3])",
           ("tests/test_training_sft.py::test_sft_draws_plans_workers_and_wordings_uniformly_and_never_the_simulators_wording",),
           tags=("sft",)),
    Mutant("sft-check-never-by-another-worker", "conductor/training/strategies.py",
           "chosen[1] = chosen[0] if rng.random() < 0.5 else", "chosen[1] = chosen[0] if True else",
           ("tests/test_training_sft.py::test_worker_ties_follow_the_plan",), tags=("sft",)),
    Mutant("sft-wording-only-the-first", "conductor/training/strategies.py",
           "return _KIND_PHRASES.get(kind, {}).get(role, ()) + _GENERIC_PHRASES[role]",
           "return (_KIND_PHRASES.get(kind, {}).get(role, ()) + _GENERIC_PHRASES[role])[:1]",
           ("tests/test_training_sft.py::test_the_wording_library_mixes_precise_and_loose_instructions",), tags=("sft",)),
    Mutant("sft-wording-split-from-its-separator", "conductor/training/sft_data.py",
           'tokens += [quoted, f", {quoted}"]', "tokens += [quoted]",
           ("tests/test_training_sft.py::test_every_decision_is_one_token_of_its_own",), tags=("sft",)),
    # --- added with the tests that kill them ----------------------------------------------------
    Mutant("best-model-on-a-tie", "conductor/training/callbacks.py",
           "result.accuracy > self.best", "result.accuracy >= self.best",
           ("tests/test_training_grpo.py::test_early_stopping_keeps_the_best_model",)),
    Mutant("early-stopping-never-stops", "conductor/training/callbacks.py",
           "self._since_best >= self.patience", "self._since_best > 10**6",
           ("tests/test_training_grpo.py::test_early_stopping_keeps_the_best_model",)),
    Mutant("last-model-not-the-best", "conductor/training/grpo.py",
           'model_dir = out / "best" if held_out.best_step is not None and held_out.best_step != steps else final',
           "model_dir = final",
           ("tests/test_training_grpo.py::test_early_stopping_keeps_the_best_model",)),
    Mutant("full-launcher-no-rlimit-fsize", "conductor/sandbox_launch.py",
           "(resource.RLIMIT_FSIZE, limits.file_mb << 20), ", "",
           ("tests/test_sandbox.py",)),
    Mutant("retry-after-ignored", "conductor/workers/calling.py",
           "delay = max(delay, min(retry_after, self.backoff_max_s))", "delay = delay",
           ("tests/test_workers_openai.py::test_429_with_retry_after_is_honoured",)),
    Mutant("rpm-bucket-never-waits", "conductor/workers/limits.py",
           "if self._tokens >= 1:", "if True:",
           ("tests/test_workers_openai.py::test_provider_concurrency_and_rpm_limits",)),
    Mutant("gpu-hour-no-lock", "conductor/evaluation/conductor_cost.py",
           "        async with lock:\n", "        if True:\n",
           ("tests/test_evaluation_reporting.py::test_gpu_hour_planner_times_one_generation_at_a_time",)),
    Mutant("mlflow-not-opened-early", "tasks/evaluation.py",  # slow to die: the call waits 120 s for it
           "            prepare_evaluation_store()\n", "            pass\n",
           ("tests/test_evaluation_reporting.py::test_mlflow_is_opened_while_the_calls_run",)),
    Mutant("paper-sim-gpt5-math-off-table-7", "deployments/pools/paper-sim.yaml",
           "skills: {math: 0.7445,", "skills: {math: 0.7545,",
           ("tests/test_simulated_pools.py::test_paper_sim_closed_workers_are_configured_at_table_7",)),
    Mutant("simulated-skill-bisection-inverted", "conductor/workers/simulated/latent.py",
           "lo, hi = (mid, hi) if mean < skill else (lo, mid)", "lo, hi = (lo, mid) if mean < skill else (mid, hi)",
           ("tests/test_simulated_pools.py::test_each_closed_worker_alone_lands_within_3_points_of_table_7",)),
    Mutant("library-may-import-flows", "pyproject.toml",
           '"mlflow", "warehouse", "registry", "tasks", "flows", "server"]', '"mlflow", "warehouse", "registry", "tasks", "server"]',
           ("tests/test_layers.py::test_the_library_may_not_import_any_entry_point_implementation",)),
    Mutant("google-key-order-swapped", "conductor/workers/google.py",
           '("GEMINI_API_KEY", "GOOGLE_API_KEY")', '("GOOGLE_API_KEY", "GEMINI_API_KEY")',
           ("tests/test_drill_secrets.py::test_sentinel_keys_never_reach_the_warehouse_or_the_server_log",)),
    Mutant("call-timeout-policy-ignored", "conductor/workers/calling.py",
           "timeout = policy.timeout_s or worker.spec.timeout_s", "timeout = worker.spec.timeout_s",
           ("tests/test_workers_openai.py::test_slow_response_times_out",)),
    Mutant("averify-blocks-the-loop", "conductor/verify/__init__.py",
           "verdict = await _shared(key, lambda: verify(problem, answer_text, code_limits=code_limits))",
           "verdict = verify(problem, answer_text, code_limits=code_limits)",
           ("tests/test_verify_code.py::test_averify_runs_code_off_the_event_loop",)),
    # --- issue 25: the evaluation's cancellation and trace writer, owned by the command and flow --
    Mutant("cancellation-cancels-nothing", "tasks/solve.py",
           "            loop.call_soon_threadsafe(task_.cancel)\n", "            pass\n",
           ("tests/test_run_lifecycle.py::test_a_cancellation_stops_a_solve_in_another_thread_and_keeps_what_finished",
            "tests/test_eval_interrupt.py")),
    Mutant("evaluation-solves-not-cancellable", "flows/evaluation.py",
           "cancellation=cancellation)))", "cancellation=None)))",
           ("tests/test_eval_interrupt.py",)),
    Mutant("handed-off-writes-not-drained", "flows/evaluation.py",
           "            writer.drain()\n", "            pass\n",
           ("tests/test_evaluation_fanout.py::test_a_trace_batch_that_cannot_be_written_fails_the_evaluation_and_its_runs",)),
    Mutant("last-batch-not-handed-off", "tasks/traces.py",
           "        else:\n            self._hand()\n", "        else:\n            pass\n",
           ("tests/test_run_lifecycle.py::test_handed_off_batches_are_written_and_each_writer_answers_for_its_own",
            "tests/test_eval_interrupt.py")),
    Mutant("interrupted-evaluation-leaves-solves-running", "flows/evaluation.py",
           "    except BaseException:\n        cancellation.stop()\n", "    except BaseException:\n",
           ("tests/test_eval_interrupt.py::test_an_interrupt_without_the_commands_handler_still_stops_the_solves",)),
    Mutant("trace-writer-closed-without-waiting", "tasks/traces.py",
           "self._executor.shutdown(wait=True)", "self._executor.shutdown(wait=False, cancel_futures=True)",
           ("tests/test_run_lifecycle.py::test_a_closed_writer_has_written_every_batch_it_was_handed",)),
    # --- issue 24: one source of settings, never simulated by accident, accelerate ----------------
    Mutant("training-ignores-conductor-pool-file", "conductor/training/config.py",
           'overrides.setdefault("pool_file", str(load_settings(profile=profile).pool_file))', "pass",
           ("tests/test_night_settings.py::test_conductor_pool_file_is_the_training_pool_too",)),
    Mutant("production-accepts-simulated-pool", "conductor/config.py",
           'if not get_profile(profile).simulated_pool and True in kinds', 'if get_profile(profile).simulated_pool and True in kinds',
           ("tests/test_night_settings.py::test_production_nightly_on_the_simulated_pool_refuses_in_one_line",)),
    Mutant("mixed-pools-accepted", "conductor/config.py", "if len(kinds) > 1:", "if len(kinds) > 2:",
           ("tests/test_night_settings.py::test_a_night_mixing_simulated_and_real_pools_is_refused",)),
    Mutant("repeat-not-reseeded", "conductor/workers/pool.py",
           '"seed": int(w.options.get("seed", 0)) + shift}', '"seed": int(w.options.get("seed", 0))}',
           ("tests/test_night_settings.py::test_a_repeat_reseeds_simulated_workers_and_leaves_the_file_alone",)),
    Mutant("production-night-skips-key-check", "conductor/workers/check.py",
           'missing.append(f"{spec.id} ({names})")', "pass",
           ("tests/test_night_settings.py::test_dry_run_without_the_pools_keys_refuses_in_one_line",)),
    Mutant("budget-never-reached", "conductor/training/callbacks.py",
           "world_total(self.reward.stats.usd) >= self.max_usd", "world_total(self.reward.stats.usd) > self.max_usd",
           ("tests/test_nightly_production.py::test_the_dollar_budget_stops_training_cleanly",)),
    Mutant("evaluation-always-simulated", "flows/evaluation.py",
           "simulated = any(m.simulated for m in methods)", "simulated = True",
           ("tests/test_nightly_production.py::test_every_run_of_the_night_says_simulated_false",)),
    Mutant("launched-chunk-not-resumed", "tasks/launch.py",
           '"--config", str(chunk_config), "--resume",', '"--config", str(chunk_config),',
           ("tests/test_training_accelerate.py",)),
    Mutant("eval-skips-simulation-refusal", "flows/evaluation_cli.py",
           '{"evaluation": (pool, loaded.simulated)}', '{"evaluation": (pool, False)}',
           ("tests/test_night_settings.py::test_production_eval_and_serve_on_the_simulated_pool_refuse_in_one_line",)),
    Mutant("serve-skips-simulation-refusal", "server/cli.py",
           '{"serving": (pool, loaded.simulated)}', '{"serving": (pool, False)}',
           ("tests/test_night_settings.py::test_production_eval_and_serve_on_the_simulated_pool_refuse_in_one_line",)),
    Mutant("night-spend-unknown-as-zero", "warehouse/nightly.py",
           'return None if row["unpriced"] else float(row["usd"] or 0.0)', 'return float(row["usd"] or 0.0)',
           ("tests/test_nightly_costs.py::test_a_call_of_unknown_price_makes_the_spend_unknown_not_zero",)),
    Mutant("gate-takes-unknown-cost-as-cheap", "registry/promotion.py",
           "limit, cheap = None, False", "limit, cheap = None, True",
           ("tests/test_promotion.py::test_an_unknown_cost_keeps_the_challenger_out_and_is_never_taken_as_zero",)),
    Mutant("gate-outcomes-unknown-cost-as-zero", "warehouse/nightly.py",
           "CASE WHEN q.cost_known THEN o.cost_usd END AS cost_usd", "o.cost_usd",
           ("tests/test_nightly_costs.py::test_the_gates_paired_outcomes_keep_an_unknown_cost_unknown",)),
    Mutant("run-logs-sent-after-the-server-stopped", "flows/prefect_server.py",
           "        _send_buffered_run_logs()\n", "        pass\n",
           ("tests/test_prefect_server.py::test_a_flow_run_in_the_tied_server_leaves_no_log_error_at_exit",)),
    Mutant("mcnemar-two-sided", "registry/promotion.py",
           "for k in range(wins, n + 1)) / 2**n", "for k in range(wins, n + 1)) / 2**(n - 1)",
           ("tests/test_promotion.py::test_mcnemar_p",)),
    # --- issue 25's house: one path for each fact ------------------------------------------------
    # server/app.py: every endpoint that runs a question goes through one handler (`runs`)
    Mutant("serve-question-unauthenticated", "server/app.py",
           "key_id = authenticate(request)", 'key_id = "anonymous"',
           ("tests/test_serve.py::test_a_request_without_a_valid_key_is_401",)),
    Mutant("serve-question-not-admitted", "server/app.py",
           "            admit(key_id)\n", "            pass\n",
           ("tests/test_serve_guards.py::test_over_the_rate_is_429_with_retry_after",)),
    # conductor/executor.py: one RunOptions value, handed down to every round of a question
    Mutant("recursion-round-default-options", "conductor/executor.py",
           "self.task, self.pool, self.planner, self.options, messages=messages,",
           "self.task, self.pool, self.planner, RunOptions(), messages=messages,",
           ("tests/test_executor.py::test_recursion_replans_and_the_child_answer_is_the_step_output",
            "tests/test_executor.py::test_recursion_depth_is_limited")),
    Mutant("options-examples-ignored", "conductor/executor.py",
           "examples = options.examples", "examples = True",
           ("tests/test_prompt_format.py",)),
    Mutant("solve-many-drops-the-run-id", "conductor/solve.py",
           "plan_and_run(task, pool, planner, options.seeded(", "plan_and_run(task, pool, planner, RunOptions().seeded(",
           ("tests/test_data_path.py::test_fifty_questions_with_one_crashing_call_store_fifty_traces",)),
    # conductor/types.py: a Task is its Problem (one definition of id, source, domain, text)
    Mutant("task-asked-without-its-options", "conductor/types.py",
           "return self.problem.task_text", "return self.problem.question",
           ("tests/test_task_text.py::test_workers_and_conductor_see_the_options",)),
    Mutant("adhoc-question-graded", "conductor/types.py",
           "return self.problem if self.graded else None", "return self.problem",
           ("tests/test_data_path.py::test_only_a_question_with_a_reference_is_graded",)),
    # issue 23: the tiny Conductor samples through its decision automaton; the night's margins
    Mutant("conductor-samples-unconstrained", "conductor/models/constrained.py",
           "        if automaton:\n", "        if False:\n",
           ("tests/test_constrained_decoding.py::test_an_untrained_conductor_writes_only_workflows_that_parse",)),
    Mutant("night-margin-reversed", "registry/promotion.py",
           "paired_bootstrap([float(challenger.correct[i]) for i in ids], [float(other.correct[i]) for i in ids],",
           "paired_bootstrap([float(other.correct[i]) for i in ids], [float(challenger.correct[i]) for i in ids],",
           ("tests/test_nightly_margins.py",)),
    Mutant("chunk-anneals-on-its-own", "conductor/training/chunks.py",
           '**{**self.overrides, "stop_at_step": self.until_step})', '**{**self.overrides, "max_steps": self.until_step})',
           ("tests/test_training_flow.py::test_training_flow_runs_chunks_and_registers",)),
    Mutant("wording-free-of-its-role", "conductor/training/sft_data.py",
           "for p in phrases(kind, role)]", "for p in all_phrases()]",
           ("tests/test_constrained_decoding.py::test_an_untrained_conductor_writes_only_workflows_that_parse",)),
]


def copy_tree(dest: Path) -> None:
    """The files git knows or would add (tracked + untracked, not ignored) copied into `dest`."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():  # a deleted but still tracked file is listed too
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def run_tests(copy: Path, tests: Sequence[str], python: str, verbose: bool) -> int:
    """pytest on `tests` inside the copy, the copy's packages first on the path (subprocesses too)."""
    env = os.environ | {"PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [python, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q", "-x", *tests]
    out = None if verbose else subprocess.DEVNULL
    return subprocess.run(cmd, cwd=copy, env=env, stdout=out, stderr=out).returncode


def run_mutant(copy: Path, mutant: Mutant, python: str, verbose: bool) -> str:
    path = copy / mutant.file
    text = path.read_text() if path.is_file() else ""
    if text.count(mutant.original) != 1:
        return "STALE"
    path.write_text(text.replace(mutant.original, mutant.replacement))
    try:
        rc = run_tests(copy, mutant.tests, python, verbose)
    finally:
        path.write_text(text)
    return {0: "SURVIVED", 1: "killed"}.get(rc, f"ERROR (pytest exit {rc})")


def select(mutants: Sequence[Mutant], only: Sequence[str], skip_tags: Sequence[str]) -> list[Mutant]:
    unknown = set(only) - {m.name for m in mutants}
    if unknown:
        raise SystemExit(f"unknown mutant(s): {', '.join(sorted(unknown))}; --list shows the names")
    return [m for m in mutants if (not only or m.name in only) and not set(m.tags) & set(skip_tags)]


def main(argv: Sequence[str] | None = None, mutants: Sequence[Mutant] = MUTANTS) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="run only this mutant (repeatable)")
    parser.add_argument("--skip-tag", action="append", default=[], metavar="TAG", help="skip mutants with this tag")
    parser.add_argument("--list", action="store_true", help="print the mutants and exit")
    parser.add_argument("--check-green", action="store_true", help="first run each mutant's tests unbroken")
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"), help="interpreter with pytest")
    parser.add_argument("-v", "--verbose", action="store_true", help="show pytest's output")
    args = parser.parse_args(argv)
    chosen = select(mutants, args.only, args.skip_tag)
    if args.list:
        for m in chosen:
            print(f"{m.name:34} {m.file}  ->  {' '.join(m.tests)}{'  [' + ','.join(m.tags) + ']' if m.tags else ''}")
        return 0
    rows: list[tuple[Mutant, str]] = []
    with tempfile.TemporaryDirectory(prefix="conductor-mutants-") as tmp:
        copy = Path(tmp)
        copy_tree(copy)
        for m in chosen:
            if args.check_green and run_tests(copy, m.tests, args.python, args.verbose) != 0:
                outcome = "ERROR (red before the break)"
            else:
                outcome = run_mutant(copy, m, args.python, args.verbose)
            rows.append((m, outcome))
            print(f"{outcome:12} {m.name}  ({m.file})", flush=True)
    print()
    print(f"{'mutant':34} {'outcome':12} tests")
    for m, outcome in rows:
        print(f"{m.name:34} {outcome:12} {' '.join(m.tests)}")
    killed = sum(outcome == "killed" for _, outcome in rows)
    print(f"\n{killed} of {len(rows)} killed")
    return 0 if killed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
