"""Does GRPO teach the tiny Conductor to orchestrate? Held-out accuracy, $ per question, calls per
question and CPU-minutes on the SIMULATED pools (local.yaml and paper-sim.yaml), for: a random
workflow, each single worker, the per-domain oracle router, the oracle's strategies (self-verify,
3 and 4 attempts + an aggregator, every step on the domain's oracle worker), template fan-out and
verify, SFT only, and GRPO for several seeds (each with a per-domain histogram of its workflows'
shapes, conductor.shapes, and the share with >= 3 steps); plus the randomized-pools comparison (a model trained on random
subsets of the pool vs the fixed-pool model, both evaluated on held-out random subsets).

Goal (issue 10): trained >= best single worker + 10 points and within 3 points of the per-domain
oracle in >= 2 of 3 seeds, at <= 10 CPU-minutes per seed on 2 cores. Numbers describe the
simulation, never a real model.

Every measured row is saved as JSON under --out/<pool>/ as soon as it exists, so seeds can run in
separate processes (or on other days) and `--report` assembles what is there. The held-out set
is the whole held-out split of the generated bank (509 problems) unless `--test-n` says fewer:

    python benchmarks/learning.py --pool local --baselines --sft --seeds 0 1 2
    python benchmarks/learning.py --pool paper-sim --baselines --sft --seeds 0 1 2   # 400 GRPO steps here (POOL_STEPS)
    python benchmarks/learning.py --pool local --randomized 0          # randomized-pools comparison, seed 0
    python benchmarks/learning.py --pool local --pool paper-sim --report --write docs/benchmarks.md
    python benchmarks/learning.py --pool local --phrasings heldout --rescore 0 --from .conductor/bench-learning
        # the trained seeds again, on the held-out problems in words no training saw

CPU-minutes are this process's user+system CPU time (resource.getrusage) for the stage, so other
people's load on the machine inflates wall time but not these. A GRPO seed's CPU-minutes include
the SFT warm start it started from (each seed would need one on its own).
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.quiet import quiet_environment  # noqa: E402

quiet_environment()

from benchmarks.report import ResultsStore, add_results_options, cpu_s, write_section  # noqa: E402
from conductor.config import REPO_ROOT  # noqa: E402
from conductor.planners import template_workflow  # noqa: E402
from conductor.shapes import shape_of  # noqa: E402
from conductor.training.compare import (ORACLE_STRATEGIES, Baselines, baselines, evaluate_model_dir,  # noqa: E402
                                        oracle_strategy, score)
from conductor.training.config import local_profile  # noqa: E402
from conductor.cli.common import quiet_library_bars  # noqa: E402
from conductor.training.dataset import PoolSampling, build_rows  # noqa: E402
from conductor.training.evaluate import EvalResult  # noqa: E402
from conductor.training.pipeline import run_training, training_split  # noqa: E402
from conductor.training.problems import PHRASINGS, bank_splits, take_per_domain, heldout_problems  # noqa: E402
from conductor.training.sft_data import completion_text, draw_example  # noqa: E402
from conductor.training.warm import warm_started_tiny  # noqa: E402
from conductor.workflow import render  # noqa: E402

POOLS = {"local": REPO_ROOT / "deployments" / "pools" / "local.yaml",
         "paper-sim": REPO_ROOT / "deployments" / "pools" / "paper-sim.yaml"}
# GRPO steps per pool when --steps is not given (None: the local profile's 200). On paper-sim the
# ensembles beat a check by less (oracle + 4 attempts + aggregator +6.3 points, self-verify +2.0,
# against +8.0 and +4.5 on local), and with 200 steps 2 of 3 seeds settled on a check-and-refine
# (0.662 / 0.670 / 0.697, best single 0.633); with 400, 0.676 / 0.694 / 0.703 (docs/training.md).
POOL_STEPS: dict[str, int | None] = {"local": None, "paper-sim": 400}


def drop(figures: dict) -> None:
    """Where a trainer's per-step log dict goes in a benchmark: nowhere (its tables are the output)."""


def routing(result: EvalResult, base: Baselines) -> dict[str, dict[str, int]]:
    """Per domain, how often each first worker was chosen (by name)."""
    names = [s.id for s in base.pool.specs]
    out: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for row, trace in zip(base.rows, result.traces):
        wf = trace.workflow
        out[row.problem.domain]["unparsed" if wf is None else "+".join(names[i] for i in wf.model_id)] += 1
    return {d: dict(c.most_common(3)) for d, c in sorted(out.items())}


def shape_histogram(result: EvalResult, base: Baselines) -> dict[str, dict[str, int]]:
    """Per domain, how many workflows had each shape (conductor.shapes), most frequent first."""
    out: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for row, trace in zip(base.rows, result.traces):
        out[row.problem.domain][shape_of(trace)] += 1
    return {d: dict(c.most_common()) for d, c in sorted(out.items())}


def deep_share(result: EvalResult, base: Baselines) -> dict[str, float]:
    """Per domain, the share of workflows with 3 or more steps (the issue's bar: >= 30 % in >= 2 domains)."""
    deep: dict[str, list[bool]] = collections.defaultdict(list)
    for row, trace in zip(base.rows, result.traces):
        deep[row.problem.domain].append(trace.workflow is not None and len(trace.workflow) >= 3)
    return {d: sum(v) / len(v) for d, v in sorted(deep.items())}


def accuracy_by_domain(result: EvalResult, base: Baselines) -> dict[str, float]:
    right: dict[str, list[bool]] = collections.defaultdict(list)
    for row, trace in zip(base.rows, result.traces):
        right[row.problem.domain].append(bool(trace.verdict and trace.verdict.correct))
    return {d: sum(v) / len(v) for d, v in sorted(right.items())}


def shapes_line(row: dict) -> str:
    """`math: fan_out_aggregate 120, single 5 (>=3 steps 96%); ...` of a row's histogram."""
    deep, acc = row.get("deep_share", {}), row.get("accuracy_by_domain", {})
    return "; ".join(f"{d}: " + ", ".join(f"{s} {n}" for s, n in hist.items())
                     + (f" (>=3 steps {100 * deep[d]:.0f}%)" if d in deep else "")
                     + (f" acc {acc[d]:.3f}" if d in acc else "")
                     for d, hist in row["shapes"].items())


def shape_figures(result: EvalResult, base: Baselines) -> dict:
    return {"shapes": shape_histogram(result, base), "deep_share": deep_share(result, base),
            "accuracy_by_domain": accuracy_by_domain(result, base)}


def row_of(name: str, r: EvalResult, *, cpu_min: float | None = None, wall_min: float | None = None,
           **extra: object) -> dict:
    return {"method": name, "n": r.n, "accuracy": r.accuracy, "format_rate": r.format_rate,
            "usd_per_question": r.usd_per_question, "calls_per_question": r.calls_per_question,
            "cpu_min": cpu_min, "wall_min": wall_min, **extra}


class Store(ResultsStore):
    """results.json under --out/<pool>: one entry per method, replaced when re-measured."""

    def summary(self, row: dict) -> str:
        line = (f"  {row['method']}: accuracy {row['accuracy']:.3f}, format {row['format_rate']:.2f}, "
                + (f"${row['usd_per_question']:.4f}/q" if row['usd_per_question'] is not None else "$ unknown/q")
                + f", {row['calls_per_question']:.2f} calls/q"
                + (f", {row['cpu_min']:.1f} CPU-min" if row.get("cpu_min") is not None else ""))
        return line + (f"\n    shapes: {shapes_line(row)}" if row.get("shapes") else "")


def test_set(n: int | None, phrasings: str = "bank") -> list:
    """`n` held-out bank problems, stratified by domain; None: the whole held-out split. phrasings
    "heldout": the same problems in the held-out style's words (training never sees it)."""
    test = heldout_problems(phrasings)
    return list(test) if n is None else take_per_domain(test, n, seed=0)


def run_baselines(base: Baselines, store: Store, seed: int = 0) -> None:
    rows, pool = base.rows, base.pool
    workers = [i for i, s in enumerate(pool.specs) if s.provider != "conductor"]
    rng = random.Random(seed)
    # A random workflow: the SFT data's generator (a plan from the library, wording from the
    # phrasing library, workers at random): what the warm start imitates, with no routing.
    texts = [completion_text(r.problem, wf, plan) for r in rows for plan, wf in [draw_example(r.problem, workers, rng)]]
    store.put(row_of("random workflow", score(texts, rows, pool)))
    assert base.random_single is not None and base.oracle is not None
    store.put(row_of("random single worker", base.random_single))
    for w, r in base.single.items():
        store.put(row_of(f"single worker: {w}", r, kind="single"))
    store.put(row_of("per-domain oracle router", base.oracle, kind="oracle"))
    # What a strategy (not a router) is worth here: each on the domain's oracle worker.
    for name in ORACLE_STRATEGIES:
        r = oracle_strategy(base, name)
        store.put(row_of(name, r, kind="oracle strategy", **shape_figures(r, base)))
    for shape in ("fanout", "verify"):
        text = render(template_workflow(shape, workers))
        store.put(row_of(f"template {shape}", score([text] * len(rows), rows, pool)))


def sft_dir_for(out: Path, pool_file: Path, *, randomized: bool = False, seed: int = 0) -> tuple[Path, float, float]:
    """The warm start (reused when present, with its recorded cost): (dir, CPU-min, wall-min)."""
    cfg = local_profile(out, pool_file=str(pool_file), randomized_pools=randomized, seed=seed)
    sft, cost = out / "sft", out / "sft_cost.json"
    if (sft / "config.json").is_file() and cost.exists():
        c = json.loads(cost.read_text())
        return sft, c["cpu_min"], c["wall_min"]
    c0, w0 = cpu_s(), time.perf_counter()
    train, _ = training_split(cfg)
    warm_started_tiny(cfg, train, on_log=drop)
    c = {"cpu_min": (cpu_s() - c0) / 60, "wall_min": (time.perf_counter() - w0) / 60}
    cost.write_text(json.dumps(c))
    return sft, c["cpu_min"], c["wall_min"]


def grpo_seed(out: Path, pool_file: Path, sft: Path, seed: int, steps: int, *, randomized: bool = False):  # noqa: ANN201
    cfg = local_profile(out, model_name_or_path=str(sft), max_steps=steps, seed=seed, train_seed=seed,
                        pool_file=str(pool_file), randomized_pools=randomized)
    c0, w0 = cpu_s(), time.perf_counter()
    outcome = run_training(cfg, on_log=drop)
    return outcome.result, (cpu_s() - c0) / 60, (time.perf_counter() - w0) / 60


def subset_rows(base: Baselines, seed: int = 1234):  # noqa: ANN201
    """The held-out problems, each offered a seeded random subset (2..all workers, shuffled)."""
    return build_rows([r.problem for r in base.rows], base.pool, PoolSampling(randomized=True, k_min=2), seed=seed)


def report(pool_name: str, store: Store) -> str:
    data = store.load()
    if not data:
        return f"Pool {pool_name}: nothing measured yet."
    lines = ["| method (simulated pool) | held-out acc | format | $/question | calls/question | CPU-min | wall-min |",
             "|---|---|---|---|---|---|---|"]

    def fmt(v: float | None, spec: str) -> str:
        return "n/a" if v is None else format(v, spec)

    order = sorted(data.values(), key=lambda r: (r["method"].startswith(("SFT", "GRPO", "randomized")), r["method"]))
    for r in order:
        lines.append(f"| {r['method']} | {r['accuracy']:.3f} | {r['format_rate']:.2f} | {fmt(r['usd_per_question'], '.4f')} | "
                     f"{r['calls_per_question']:.2f} | {fmt(r.get('cpu_min'), '.1f')} | {fmt(r.get('wall_min'), '.1f')} |")
    singles = {k: v for k, v in data.items() if v.get("kind") == "single"}
    oracle = data.get("per-domain oracle router")
    text = "\n".join(lines) + "\n\n"
    if singles and oracle:
        best_name, best = max(singles.items(), key=lambda kv: kv[1]["accuracy"])
        best_name = best_name.removeprefix("single worker: ")
        seeds = {k: v for k, v in data.items() if k.startswith("GRPO seed")}
        met = [k for k, v in seeds.items() if v["accuracy"] >= best["accuracy"] + 0.10
               and v["accuracy"] >= oracle["accuracy"] - 0.03]
        cheap = [k for k in met if (seeds[k].get("cpu_min") or 1e9) <= 10.0]
        text += (f"Pool {pool_name} (simulated), {best['n']} held-out bank problems: best single {best_name} "
                 f"{best['accuracy']:.3f}, per-domain oracle {oracle['accuracy']:.3f}; the goal (>= best single + 10 "
                 f"points and >= oracle - 3 points, <= 10 CPU-min) is met by {len(cheap)} of {len(seeds)} GRPO seeds "
                 f"run{' (' + ', '.join(cheap) + ')' if cheap else ''}. ")
        for k, v in seeds.items():
            text += (f"{k} ({v.get('stop_reason', '')}, {v.get('steps', '?')} steps): {v['accuracy'] - best['accuracy']:+.3f} vs best single, {v['accuracy'] - oracle['accuracy']:+.3f} "
                     f"vs oracle, routing {v.get('routing')}"
                     + (f", shapes {shapes_line(v)}" if v.get("shapes") else "") + ". ")
        # Issue 23's bar: >= oracle + 3 points, and >= 30 % of workflows with >= 3 steps in >= 2 domains.
        strategic = [k for k, v in seeds.items() if v["accuracy"] >= oracle["accuracy"] + 0.03
                     and sum(share >= 0.30 for share in v.get("deep_share", {}).values()) >= 2]
        text += (f"\n\nStrategies (issue 23: >= oracle + 3 points, and >= 30 % of workflows with >= 3 steps in >= 2 "
                 f"domains): met by {len(strategic)} of {len(seeds)} GRPO seeds run"
                 f"{' (' + ', '.join(strategic) + ')' if strategic else ''}.")
        # Issue 23's paper-sim bar, the paper's claim in this environment: >= best single + 5 points.
        above = [k for k, v in seeds.items() if v["accuracy"] >= best["accuracy"] + 0.05]
        text += (f" Best single + 5 points (issue 23's paper-sim bar; the paper reports +8.2): met by {len(above)} "
                 f"of {len(seeds)}{' (' + ', '.join(above) + ')' if above else ''}.")
        strategies = {k: v for k, v in data.items() if v.get("kind") == "oracle strategy"}
        if strategies:
            text += "\n\nThe oracle's strategies (every step on the domain's oracle worker): " + "; ".join(
                f"{k} {v['accuracy']:.3f} ({v['accuracy'] - oracle['accuracy']:+.3f} vs oracle)"
                for k, v in sorted(strategies.items())) + "."
    rescored = sorted({v["rescored_from"] for v in data.values() if v.get("rescored_from")})
    if rescored:
        text += (f"\n\nThe SFT and GRPO rows are the models trained on {', '.join(rescored)} (`--rescore`), evaluated "
                 "again on these problems; their CPU-minutes are from that training.")
    hosts = sorted({f"{v['host']} (load {v['load_avg_1m']:.1f} at the end)" for v in data.values() if v.get("cpu_min")})
    text += ("\n\nSingle workers get one step with the pool's on-topic instruction; the oracle routes each domain to the "
             "worker best on these rows in the single-worker runs (knowledge no router has in advance), and is scored "
             "in its own run with fresh simulated dice, so it is a noisy bound (about +-0.04 at 128 problems) and can "
             "land below the best single worker. calls/question counts "
             "worker calls. CPU-min: this process's CPU time for the stage (SFT included in each GRPO seed); "
             f"machines: {', '.join(hosts) or 'n/a'}.")
    return text


def main() -> None:
    quiet_library_bars()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pool", action="append", choices=sorted(POOLS), help="Simulated pool(s) (default: both).")
    ap.add_argument("--baselines", action="store_true", help="Measure the baselines (no training).")
    ap.add_argument("--sft", action="store_true", help="Warm-start (or reuse) and evaluate SFT only.")
    ap.add_argument("--own-warm-start", action="store_true",
                    help="Each GRPO seed from its own warm start with that seed (warm<seed>/; seed 0's is warm/), so a"
                         " seed is trained from scratch; default: every seed from seed 0's warm start.")
    ap.add_argument("--seeds", type=int, nargs="*", default=[], help="GRPO seeds to train and evaluate.")
    ap.add_argument("--randomized", type=int, nargs="*", default=[],
                    help="Seeds of the randomized-pools comparison (needs the fixed-pool GRPO seed's model).")
    ap.add_argument("--partial", type=int, nargs="*", default=[],
                    help="Seeds whose GRPO run was stopped before its end (a deadline): evaluate the best held-out "
                         "model saved so far (else the last checkpoint) and record the steps it reached.")
    ap.add_argument("--cpu-min", type=float, nargs="*", default=[],
                    help="With --partial: the stopped runs' CPU-minutes (e.g. from `ps -o time`), one per seed.")
    ap.add_argument("--wall-min", type=float, nargs="*", default=[], help="With --partial: their wall minutes.")
    ap.add_argument("--rescore", type=int, nargs="*", default=[],
                    help="Finished GRPO seeds to evaluate again, with the SFT-only model, on this run's held-out "
                         "set (e.g. --test-n 509, the whole held-out split, with another --out): their models "
                         "and CPU-minutes are read from --from's results.")
    ap.add_argument("--from", dest="source", type=Path, default=None,
                    help="With --rescore: the --out of the run that trained them (default: --out).")
    ap.add_argument("--steps", type=int, default=None,
                    help="GRPO steps (default: the local profile's 200 on local, 400 on paper-sim: POOL_STEPS).")
    ap.add_argument("--test-n", type=int, default=None,
                    help="Held-out bank problems (stratified by domain; default: the whole held-out split).")
    ap.add_argument("--phrasings", choices=PHRASINGS, default="bank",
                    help="The held-out problems in the bank's words, or in the held-out style's (same problems, "
                         "text from a generator nothing trains on); results under --out/<pool>-phrasings-heldout.")
    add_results_options(ap, out=Path(".conductor/bench-learning"))
    ns = ap.parse_args()
    pools = ns.pool or sorted(POOLS)
    for name in pools:
        steps = ns.steps or POOL_STEPS[name] or local_profile(ns.out).max_steps
        pool_file, out = POOLS[name], ns.out / name
        store = Store((out if ns.phrasings == "bank" else ns.out / f"{name}-phrasings-{ns.phrasings}") / "results.json")
        needs_base = ns.baselines or ns.sft or ns.seeds or ns.randomized or ns.partial or ns.rescore
        scale = local_profile(ns.out).simulated_latency_scale
        base = baselines(test_set(ns.test_n, ns.phrasings), pool_file, latency_scale=scale) if needs_base else None
        if ns.baselines:
            print(f"[{name}] baselines", flush=True)
            run_baselines(base, store)
        if ns.sft or ns.seeds:
            sft, sft_cpu, sft_wall = sft_dir_for(out / "warm", pool_file)
            if ns.sft:
                r = evaluate_model_dir(sft, base, max_new_tokens=64)
                store.put(row_of("SFT only", r, cpu_min=sft_cpu, wall_min=sft_wall, routing=routing(r, base),
                                 **shape_figures(r, base)))
            for seed in ns.seeds:
                print(f"[{name}] GRPO seed {seed}, {steps} steps", flush=True)
                # seed 0's own warm start is the shared one (warm/); the others', with --own-warm-start, warm<seed>/
                own = ns.own_warm_start and seed != 0
                warm, warm_cpu, warm_wall = (sft_dir_for(out / f"warm{seed}", pool_file, seed=seed) if own
                                             else (sft, sft_cpu, sft_wall))
                result, cpu, wall = grpo_seed(out / f"seed{seed}", pool_file, warm, seed, steps)
                r = evaluate_model_dir(result.model_dir, base, max_new_tokens=64)
                store.put(row_of(f"GRPO seed {seed}", r, cpu_min=cpu + warm_cpu, wall_min=wall + warm_wall,
                                 routing=routing(r, base), **shape_figures(r, base), steps=result.steps,
                                 stop_reason=result.stop_reason,
                                 best_step=result.best_step, model_dir=str(result.model_dir),
                                 eval_history=[(h["step"], h["eval_accuracy"]) for h in result.eval_history],
                                 time_split=result.time_split))
        for k, seed in enumerate(ns.partial):
            run_dir = out / f"seed{seed}"
            ckpts = sorted(run_dir.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))
            reached = json.loads((ckpts[-1] / "trainer_state.json").read_text())["global_step"] if ckpts else 0
            best = run_dir / "best"
            model_dir = best if (best / "config.json").is_file() else ckpts[-1]
            _, sft_cpu, sft_wall = sft_dir_for(out / "warm", pool_file)
            cpu = ns.cpu_min[k] + sft_cpu if k < len(ns.cpu_min) else None
            wall = ns.wall_min[k] + sft_wall if k < len(ns.wall_min) else None
            r = evaluate_model_dir(model_dir, base, max_new_tokens=64)
            store.put(row_of(f"GRPO seed {seed}", r, cpu_min=cpu, wall_min=wall, routing=routing(r, base),
                             **shape_figures(r, base), steps=reached, stop_reason=f"stopped by the deadline at step {reached} of {steps}",
                             model_dir=str(model_dir), evaluated=model_dir.name))
        if ns.rescore:
            source = (ns.source or ns.out) / name
            trained = Store(source / "results.json").load()
            for method in ["SFT only"] + [f"GRPO seed {seed}" for seed in ns.rescore]:
                if method not in trained:
                    raise SystemExit(f"--rescore: no {method!r} in {source}/results.json")
                old = trained[method]
                model_dir = Path(old["model_dir"]) if "model_dir" in old else source / "warm" / "sft"
                r = evaluate_model_dir(model_dir, base, max_new_tokens=64)
                keep = {k: old[k] for k in ("cpu_min", "wall_min", "steps", "stop_reason", "best_step") if k in old}
                store.put(row_of(method, r, routing=routing(r, base), **shape_figures(r, base), model_dir=str(model_dir),
                                 rescored_from=old.get("measured_at"), **keep))
        for seed in ns.randomized:
            fixed = store.load().get(f"GRPO seed {seed}")
            if fixed is None:
                raise SystemExit(f"--randomized {seed}: run --seeds {seed} first (the fixed-pool model to compare with)")
            rows = subset_rows(base)
            sft, sft_cpu, sft_wall = sft_dir_for(out / "warm-randomized", pool_file, randomized=True)
            result, cpu, wall = grpo_seed(out / f"randomized-seed{seed}", pool_file, sft, seed, steps, randomized=True)
            sub = Baselines(rows=rows, pool=base.pool)
            for label, md, c, w in (("trained on random subsets", result.model_dir, cpu + sft_cpu, wall + sft_wall),
                                    ("trained on the fixed pool", Path(fixed["model_dir"]), None, None)):
                r = evaluate_model_dir(md, sub, max_new_tokens=64)
                store.put(row_of(f"randomized pools, seed {seed}: {label}, on held-out subsets", r, cpu_min=c,
                                 wall_min=w))
        if ns.report or ns.write:
            body = report(name, store)
            print(body)
            if ns.write:
                # One section per held-out set size: 128 (the old default), and e.g. the whole split.
                measured = {r["n"] for r in store.load().values()}
                n = len(base.rows) if base is not None else (measured.pop() if len(measured) == 1
                                                              else ns.test_n or len(bank_splits().test))
                key = f"learning-bank-{name}" + ("" if n == 128 else f"-{n}")
                worded = ""
                if ns.phrasings != "bank":
                    key, worded = f"{key}-phrasings-{ns.phrasings}", ", asked in the held-out phrasings"
                write_section(ns.write, key,
                              f"Learning to orchestrate on {n} held-out bank problems{worded}, {name} pool "
                              "(benchmarks/learning.py, simulated)", body)


if __name__ == "__main__":
    main()
