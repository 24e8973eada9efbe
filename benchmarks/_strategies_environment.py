"""`benchmarks/strategies.py --environment`: each plan on each domain's oracle worker (SIMULATED)."""
import asyncio, random, collections
from conductor.training.problems import bank_splits
from conductor.training.dataset import training_pool, build_rows, PoolSampling
from conductor.training.evaluate import score_texts
from conductor.training.strategies import PLANS, phrases, draw_workflow
from conductor.training.sft_data import completion_text
from conductor.workers.simulated.instructions import instruction_quality
from conductor.workflow import Workflow
test = bank_splits().test
from conductor.config import DEFAULT_POOL_FILE
pool = training_pool(DEFAULT_POOL_FILE, test, latency_scale=0)
rows = build_rows(test, pool, PoolSampling(), seed=0)
# the per-domain oracle workers of local.yaml (0 generalist, 1 coder, 2 mathematician)
ORACLE = {"math": 2, "choice": 0, "freeform": 2, "code": 1}
best = {}
for d in ORACLE:
    ps = [p for p in test if p.domain == d][:40]
    for role in ("solve", "check", "combine", "plan"):
        best[(d, role)] = max(phrases(d, role), key=lambda s: sum(instruction_quality(p, s) for p in ps))
for mode in ("uniform", "best"):
    for plan in PLANS:
        rng = random.Random(0)
        texts = []
        for r in rows:
            d = r.problem.domain
            wf = draw_workflow(plan, d, [ORACLE[d]], rng, p_tied=1.0)
            if mode == "best":
                wf = Workflow(model_id=wf.model_id, subtasks=tuple(best[(d, role)] for role in plan.roles), access_list=wf.access_list)
            texts.append(completion_text(r.problem, wf, plan))
        res = asyncio.run(score_texts(texts, rows, pool, examples=False))
        print(f"{mode:8s} {plan.name:13s} acc {res.accuracy:.3f} reward {0.5+0.5*res.accuracy:.3f}", flush=True)
