"""Do strategies emerge? The warm start over the plan library, GRPO, and what the model then
*writes*, on the SIMULATED local pool (numbers describe the simulation, never a real model).

    python benchmarks/strategies.py --out /tmp/s0 --seed 0              # warm start + 400 GRPO steps
    python benchmarks/strategies.py --environment                       # what each plan pays

A training run prints, after the warm start (temperature 1, 2 samples per question) and after GRPO
(temperature 1 and greedy), on the bank's held-out split: the parse rate and plan match per
stated plan, per domain the share of workflows with >= 3 steps, the shapes and worker sets, the
mean instruction quality of the wordings (the simulator's stated formula, measured, never a
reward), and, greedily, accuracy. `--environment` scores each plan on each domain's oracle worker
with the library's wordings drawn uniformly (what GRPO starts from) and with the best wording per
kind and role (what learnt wording can reach). CPU seconds are this process's.
"""
import sys, time, random, json, resource, collections, asyncio, argparse, os
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--out", default="/tmp/strategies", help="run directory (warm start in OUT/sft, GRPO checkpoints)")
ap.add_argument("--seed", type=int, default=0, help="seed of the tiny model, the warm start's draws and GRPO")
ap.add_argument("--copies", type=int, default=8, help="warm-start draws per problem (the local profile: 8)")
ap.add_argument("--epochs", type=float, default=1.0, help="warm-start epochs over those draws")
ap.add_argument("--steps", type=int, default=400, help="GRPO steps (0: warm start only)")
ap.add_argument("--lr", type=float, default=3e-4, help="GRPO learning rate (cosine to 0)")
ap.add_argument("--sft-lr", type=float, default=3e-3, help="warm-start learning rate")
ap.add_argument("--n-test", type=int, default=508, help="held-out problems reported on (the bank's held-out split)")
ap.add_argument("--skip-sft", action="store_true", help="reuse OUT/sft from an earlier run")
ap.add_argument("--model", default=None, help="start GRPO from this model directory instead")
ap.add_argument("--environment", action="store_true", help="score each plan on the oracle worker; no training")
ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                help="any other training config field (e.g. beta=0.04), repeatable; the value is read as JSON when it parses")
a = ap.parse_args()
if a.environment:
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "_strategies_environment.py"))
    sys.exit(0)
def _value(text):
    try:
        return json.loads(text)
    except ValueError:
        return text
overrides = {k: _value(v) for k, v in (item.split("=", 1) for item in a.set)}
def cpu(): r = resource.getrusage(resource.RUSAGE_SELF); return r.ru_utime + r.ru_stime
from conductor.training.config import local_profile
from conductor.training.pipeline import training_split
from conductor.training.warm import warm_started_tiny
from conductor.training.problems import bank_splits
from conductor.training.dataset import training_pool, build_rows, PoolSampling, row_messages
from conductor.training.evaluate import generate_workflows, score_texts
from conductor.training.strategies import stated_plan, plan_of
from conductor.training.sft_data import task_line
from conductor.workers.simulated.instructions import instruction_quality
from conductor.workflow import parse
from conductor.models.tiny import load_tokenizer
from conductor.models.constrained import load_causal_lm
import torch
cfg = local_profile(a.out, seed=a.seed, sft_copies=a.copies, sft_epochs=a.epochs, sft_learning_rate=a.sft_lr,
                    max_steps=a.steps or 1, learning_rate=a.lr, max_completion_length=128,
                    eval_every=0, early_stopping_patience=0, save_steps=1000, **overrides)
train, val = training_split(cfg)
test = bank_splits().test[: a.n_test]
t0, c0 = time.time(), cpu()
if a.model:
    cfg.model_name_or_path = a.model
elif not a.skip_sft:
    warm_started_tiny(cfg, train)
else:
    cfg.model_name_or_path = a.out + "/sft"
print(f"SFT: wall {time.time()-t0:.0f}s cpu {cpu()-c0:.0f}s", flush=True)
pool = training_pool(cfg.pool_file, [*train, *test], latency_scale=0)
rows = build_rows(test, pool, PoolSampling(), seed=0)
prompts = [[m.model_dump() for m in row_messages(r, pool, examples=False)] for r in rows]

def report(model_dir, label, sample=False, reps=1):
    tok = load_tokenizer(model_dir); model = load_causal_lm(model_dir)
    texts = []
    rr = []
    if sample:
        model.eval()
        for i in range(0, len(prompts), 32):
            chunk = [tok.apply_chat_template(p, add_generation_prompt=True, tokenize=False) for p in prompts[i:i+32]]
            enc = tok(chunk, return_tensors="pt", padding=True, add_special_tokens=False)
            with torch.no_grad():
                out = model.generate(**enc, max_new_tokens=128, do_sample=True, temperature=1.0, num_return_sequences=reps, pad_token_id=tok.pad_token_id)
            texts += tok.batch_decode(out[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
        rr = [r for r in rows for _ in range(reps)]
    else:
        texts = generate_workflows(model, tok, prompts, max_new_tokens=128); rr = rows
    per = collections.defaultdict(lambda: [0, 0, 0])  # stated plan -> n, parsed, matched
    shapes = collections.defaultdict(collections.Counter)
    workers = collections.defaultdict(collections.Counter)
    q = []; ge3 = collections.Counter(); nd = collections.Counter(); kind_ok = 0; kind_by = collections.Counter()
    for t, r in zip(texts, rr):
        kind_ok += task_line(r.problem) in t; kind_by[r.problem.domain] += task_line(r.problem) in t
        sp = stated_plan(t); name = sp.name if sp else "none"
        wf = parse(t, len(pool.specs))
        ok = not hasattr(wf, "reason")
        per[name][0] += 1; per[name][1] += ok
        d = r.problem.domain; nd[d] += 1
        if ok:
            pl = plan_of(wf); per[name][2] += (pl is not None and sp is not None and pl.name == sp.name)
            shapes[d][pl.name if pl else "other"] += 1
            workers[d][tuple(sorted(set(wf.model_id)))] += 1
            ge3[d] += len(wf) >= 3
            q += [instruction_quality(r.problem, s) for s in wf.subtasks]
        else:
            shapes[d]["unparsed"] += 1
    print(f"== {label} ({len(texts)} completions)")
    for k, (n, p, m) in sorted(per.items()):
        print(f"  plan {k:13s} n={n:4d} parse={p/n:.3f} match={m/max(p,1):.3f}")
    for d in sorted(shapes):
        print(f"  {d:9s} kind right {kind_by[d]/nd[d]:.2f} >=3 steps {ge3[d]/nd[d]:.2f}  shapes {dict(shapes[d].most_common(4))}  workers {dict(workers[d].most_common(3))}")
    print(f"  mean instruction quality {sum(q)/max(1,len(q)):.3f}; kind of task stated rightly {kind_ok/len(texts):.3f}")
    if not sample:
        res = asyncio.run(score_texts(texts, rr, pool, examples=False))
        print(f"  ACCURACY {res.accuracy:.3f} format {res.format_rate:.3f} calls {res.calls_per_question:.2f} usd {res.usd_per_question:.4f}")
        bd = collections.defaultdict(list)
        for t, r in zip(res.traces, rr): bd[r.problem.domain].append(bool(t.verdict and t.verdict.correct))
        print("  by domain", {d: round(sum(v)/len(v), 3) for d, v in sorted(bd.items())})
    sys.stdout.flush()

report(cfg.model_name_or_path, "after SFT, T=1", sample=True, reps=2)
if a.steps:
    from conductor.training.grpo import train_grpo
    t1, c1 = time.time(), cpu()
    res = train_grpo(cfg, train, val[:0])
    print(f"GRPO {res.steps} steps: wall {time.time()-t1:.0f}s cpu {cpu()-c1:.0f}s split {res.time_split}", flush=True)
    h = res.history
    for row in h[:: max(1, len(h)//10)]:
        print({k: round(v, 3) for k, v in row.items() if k in ("step", "reward", "format_rate", "accuracy", "calls_per_rollout", "frac_reward_zero_std")})
    report(str(res.model_dir), "after GRPO, T=1", sample=True, reps=1)
    report(str(res.model_dir), "after GRPO, greedy")
print(f"TOTAL cpu {cpu():.0f}s")
