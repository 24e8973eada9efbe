"""Phrasing it has not seen: a trained Conductor, greedily, on the bank's held-out problems in the
bank's own words and in the held-out style's (conductor/data/synthetic/styles.py: the same
problems, ids and golds, text from a generator no training sees), side by side: accuracy, format,
accuracy and shapes per domain, the kind of task stated rightly, and how often the model writes
the same workflow for both wordings. SIMULATED local pool: numbers describe the simulation,
never a real model.

    python benchmarks/phrasings.py --model /tmp/phr0/model              # evaluate a trained model
    python benchmarks/phrasings.py --train --out /tmp/phr1 --train-phrasings bank plain \\
        --seed 0 --copies 4 --steps 200 --lr 5e-4                        # the recipe of
        # benchmarks/strategies.py, its training problems asked in several training styles

    python benchmarks/phrasings.py --report "no cue=/tmp/b0/phrasings.json" \
        "cue line=/tmp/w0/phrasings.json" --write docs/benchmarks.md    # the kind-line table

Figures are written as JSON to --json (default OUT/phrasings.json or MODEL/phrasings.json).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.quiet import quiet_environment  # noqa: E402

quiet_environment()

from benchmarks.learning import POOLS, shape_figures  # noqa: E402
from benchmarks.report import cpu_s, write_section  # noqa: E402
from conductor.evaluation.stats import mean_se  # noqa: E402
from conductor.training.compare import Baselines  # noqa: E402
from conductor.training.dataset import PoolSampling, build_rows, row_messages, training_pool  # noqa: E402
from conductor.training.evaluate import generate_workflows, score_texts  # noqa: E402
from conductor.training.problems import PHRASINGS, heldout_problems, training_phrasings  # noqa: E402
from conductor.training.sft_data import task_line  # noqa: E402
from conductor.workers.simulated.instructions import instruction_quality  # noqa: E402


def train(ns: argparse.Namespace) -> Path:
    """benchmarks/strategies.py's recipe (local profile, completion cap 128, cosine lr, no early
    stopping), with the training problems re-dressed in `--train-phrasings` (one style per problem)."""
    from conductor.training.config import local_profile
    from conductor.training.grpo import train_grpo
    from conductor.training.pipeline import training_split
    from conductor.training.warm import warm_started_tiny

    cfg = local_profile(ns.out, seed=ns.seed, sft_copies=ns.copies, sft_epochs=1.0, sft_learning_rate=3e-3,
                        max_steps=ns.steps, learning_rate=ns.lr, max_completion_length=128,
                        eval_every=0, early_stopping_patience=0, save_steps=1000)
    problems, _ = training_split(cfg)
    problems = training_phrasings(problems, ns.train_phrasings, n=cfg.bank_size)
    print("training styles:", dict(collections.Counter(p.meta.get("phrasing", "bank") for p in problems)), flush=True)
    c0, w0 = cpu_s(), time.time()
    warm_started_tiny(cfg, problems)
    print(f"SFT: wall {time.time() - w0:.0f}s cpu {cpu_s() - c0:.0f}s", flush=True)
    if ns.warm_only:  # the kind line is taught by the warm start: measure it before GRPO moves it
        return Path(cfg.model_name_or_path)
    result = train_grpo(cfg, problems, [])
    print(f"GRPO {result.steps} steps: wall {time.time() - w0:.0f}s cpu {cpu_s() - c0:.0f}s (with SFT)", flush=True)
    return Path(result.model_dir)


def evaluate(model_dir: Path, phrasings: str, n_test: int, pool_file: Path) -> tuple[dict, list[str]]:
    from conductor.models.constrained import load_causal_lm
    from conductor.models.tiny import load_tokenizer

    problems = heldout_problems(phrasings)[:n_test]
    pool = training_pool(pool_file, problems, latency_scale=0)
    rows = build_rows(problems, pool, PoolSampling(), seed=0)
    prompts = [[m.model_dump() for m in row_messages(r, pool, examples=False)] for r in rows]
    tok, model = load_tokenizer(model_dir), load_causal_lm(model_dir)
    texts = generate_workflows(model, tok, prompts, max_new_tokens=128)
    result = asyncio.run(score_texts(texts, rows, pool, examples=False))
    base = Baselines(rows=rows, pool=pool)
    kind_ok: dict[str, list[bool]] = collections.defaultdict(list)
    workers: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    quality: dict[str, list[float]] = collections.defaultdict(list)
    for t, r, trace in zip(texts, rows, result.traces):
        kind_ok[r.problem.domain].append(task_line(r.problem) in t)
        wf = trace.workflow
        workers[r.problem.domain]["unparsed" if wf is None else "+".join(map(str, sorted(set(wf.model_id))))] += 1
        if wf is not None:  # the simulator's stated wording formula, measured (never a reward here)
            quality[r.problem.domain] += [instruction_quality(r.problem, s) for s in wf.subtasks]
    figures = {"phrasings": phrasings, "n": result.n, "accuracy": result.accuracy, "format_rate": result.format_rate,
               "calls_per_question": result.calls_per_question, **shape_figures(result, base),
               "kind_stated_rightly": {d: sum(v) / len(v) for d, v in sorted(kind_ok.items())},
               "workers": {d: dict(c.most_common(4)) for d, c in sorted(workers.items())},
               "instruction_quality": {d: sum(v) / len(v) for d, v in sorted(quality.items()) if v},
               "mean_prompt_chars": sum(len(p[-1]["content"]) for p in prompts) / len(prompts),
               "correct": [bool(t.verdict and t.verdict.correct) for t in result.traces]}
    return figures, texts


def table(runs: list[dict], same: float) -> str:
    domains = sorted(runs[0]["accuracy_by_domain"])
    lines = ["| held-out problems (SIMULATED local pool) | n | accuracy | format | " + " | ".join(domains) + " |",
             "|---|---|---|---|" + "---|" * len(domains)]
    for r in runs:
        lines.append(f"| {r['phrasings']} phrasings | {r['n']} | {r['accuracy']:.3f} | {r['format_rate']:.2f} | "
                     + " | ".join(f"{r['accuracy_by_domain'][d]:.3f}" for d in domains) + " |")
    # Paired: the same problems, and the simulator's dice depend on the problem and the workflow,
    # not on the wording, so only problems given another workflow can differ.
    a, b = runs[0]["correct"], runs[1]["correct"]
    diffs = [float(y) - float(x) for x, y in zip(a, b)]
    mean, se = paired_gap(a, b)
    text = "\n".join(lines) + (f"\n\nheld-out minus bank phrasings: {mean:+.3f} (paired standard error {se:.3f}; "
                               f"{sum(d < 0 for d in diffs)} problems lost, {sum(d > 0 for d in diffs)} gained)"
                               f"\nsame workflow written for both wordings: {same:.3f} of problems\n")
    for r in runs:
        kinds = {d: round(v, 3) for d, v in r["kind_stated_rightly"].items()}
        q = {d: round(v, 3) for d, v in r["instruction_quality"].items()}
        text += f"\n{r['phrasings']}: kind of task stated rightly {kinds}; wording quality {q}; workers {r['workers']}\n"
        for d, hist in r["shapes"].items():
            text += f"  {d}: {hist} (>=3 steps {100 * r['deep_share'][d]:.0f}%)\n"
    return text


DOMAINS = ("choice", "code", "freeform", "math")


def paired_gap(bank: list[bool], typed: list[bool]) -> tuple[float, float]:
    """Typed minus bank accuracy over the same problems, and its paired standard error."""
    gap = mean_se([float(y) - float(x) for x, y in zip(bank, typed)])
    return gap.mean, gap.se


def kind_table(labelled: list[tuple[str, dict]]) -> str:
    """Per run (a phrasings.json) and wording: the kind line stated rightly per domain, and the
    accuracy, so the kind line's bar (>= 98 % typed, every domain) and the accuracy bar (typed
    within 1 point of the bank's) read off one row pair."""
    lines = ["| run | phrasings | n | accuracy | typed - bank (paired s.e.) | "
             + " | ".join(f"kind line {d}" for d in DOMAINS) + " |",
             "|---|---|---|---|---|" + "---|" * len(DOMAINS)]
    for label, data in labelled:
        by = {r["phrasings"]: r for r in data["runs"]}
        for r in data["runs"]:
            kinds = r["kind_stated_rightly"]
            gap = ""
            if r["phrasings"] == "heldout" and "bank" in by:
                mean, se = paired_gap(by["bank"]["correct"], r["correct"])
                gap = f"{100 * mean:+.1f} pts ({100 * se:.1f})"
            lines.append(f"| {label} | {r['phrasings']} | {r['n']} | {r['accuracy']:.3f} | {gap} | "
                         + " | ".join(f"{100 * kinds[d]:.1f} %" if d in kinds else "-" for d in DOMAINS) + " |")
    return "\n".join(lines) + "\n"


def report(ns: argparse.Namespace) -> None:
    labelled = []
    for item in ns.report:
        label, sep, path = item.partition("=")
        if not sep or not Path(path).is_file():
            print(f"error: --report takes LABEL=PATH to a phrasings.json, not {item!r}", file=sys.stderr)
            raise SystemExit(2)
        labelled.append((label, json.loads(Path(path).read_text())))
    body = kind_table(labelled)
    print(body)
    if ns.write:
        write_section(ns.write, "kind-line", "The kind line on typed and bank phrasings (benchmarks/phrasings.py, SIMULATED local pool)",
                      "SIMULATED: the local pool's simulated workers; the kind line is the reasoning line's "
                      "kind-of-task sentence (`sft_data.TASK_LINES`), right when it names the problem's domain. "
                      "Greedy, the bank's held-out problems in its own words (`bank`) and typed (`heldout`, "
                      "a style no training sees).\n\n" + body + ("\n" + ns.note if ns.note else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, default=None, help="a trained model directory to evaluate")
    ap.add_argument("--train", action="store_true", help="train first (strategies.py's recipe) into --out")
    ap.add_argument("--out", type=Path, default=Path("/tmp/phrasings"))
    ap.add_argument("--train-phrasings", nargs="+", default=["bank"], help="training styles (styles.TRAINING_STYLES)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--copies", type=int, default=8)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--warm-only", action="store_true", help="with --train: stop after the warm start (no GRPO)")
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--n-test", type=int, default=508, help="held-out problems (strategies.py's default)")
    ap.add_argument("--pool", choices=sorted(POOLS), default="local")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--report", nargs="+", default=None, metavar="LABEL=PATH",
                    help="print the kind-line table of these phrasings.json files (no model run)")
    ap.add_argument("--write", type=Path, default=None, help="with --report: write it into this markdown file")
    ap.add_argument("--note", default="", help="with --report --write: text after the table")
    ns = ap.parse_args()
    if ns.report:
        return report(ns)
    if ns.train == (ns.model is not None):
        ap.error("give --model DIR or --train")
    import torch

    torch.set_num_threads(1)
    model_dir = train(ns) if ns.train else ns.model
    c0 = cpu_s()
    runs, texts = [], []
    for phrasings in PHRASINGS:
        figures, written = evaluate(model_dir, phrasings, ns.n_test, POOLS[ns.pool])
        runs.append(figures)
        texts.append(written)
    same = sum(a == b for a, b in zip(*texts)) / len(texts[0])
    print(f"model {model_dir} (evaluation cpu {cpu_s() - c0:.0f}s)\n" + table(runs, same), flush=True)
    out = ns.json or (ns.out if ns.train else model_dir) / "phrasings.json"
    out.write_text(json.dumps({"model": str(model_dir), "train_phrasings": ns.train_phrasings if ns.train else None,
                               "same_workflow": same, "runs": runs}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
