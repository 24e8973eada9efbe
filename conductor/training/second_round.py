"""Second rounds (recursion) in training: the Conductor reads its first round compactly and keeps
the answer, has another worker check it, or adds attempts and an aggregator that reads both rounds
(`strategies.RECURSION_PLANS`; the aggregator reads the first round through `"prev"`).

- Warm start: `recursion_sft_examples` runs the warm start's own first rounds (plans drawn from
  `strategies.PLANS`, as `sft_examples` draws them) over the simulated pool, shows each trace in
  the recursion prompt, and pairs it with a second round drawn uniformly from the recursion
  plans. Which second round pays is left to GRPO, as the first round's plan is.
- GRPO: `OnPolicySecondRounds` turns a share of the prompt rows into second-round rows while
  training runs: each time such a row is drawn, the CURRENT policy writes its first round
  (greedily, as a deployed Conductor does) and that round is run and verified; the row's prompt
  becomes the recursion prompt over it and its `prior` column carries the round, so the reward
  can run the second round's completion with it (`score_second_round`). First rounds written
  once by the warm start taught the second round to answer the warm start's weak first rounds
  (replace them), which lost after a trained policy's strong ones (docs/training.md).
  The second round's text is then a sample in the loss like any first round's, with its own
  prompt and the final answer's reward; GRPO's group is the completions of one row, so its
  advantage compares second rounds written after the same first round (docs/training.md).
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import Any

from conductor.config import ExecutionConfig
from conductor.data.schema import Problem
from conductor.executor import RunOptions
from conductor.prompts import PriorStep, recursion_messages
from conductor.reward import reward_of
from conductor.trace import Trace
from conductor.training.dataset import PoolSampling, PromptRow, build_rows, row_messages
from conductor.training.rollout import prior_steps, rollout
from conductor.training.strategies import RECURSION_PLANS, Plan, draw_workflow
from conductor.types import Message
from conductor.workers.pool import Pool
from conductor.workflow import DEFAULT_MAX_STEPS, Workflow, later_round_max_steps


def _workers(row: PromptRow, pool: Pool) -> list[int]:
    return [i for i, s in enumerate(row.offered(pool).specs) if s.provider != "conductor"]


async def run_first_rounds(texts: Sequence[str], rows: Sequence[PromptRow], pool: Pool, *, examples: bool,
                           seed: int = 0, execution: ExecutionConfig | None = None,
                           concurrency: int = 32, seeds: Sequence[int] | None = None) -> list[Trace]:
    """Each first-round text run over its row's offered pool and verified (its reward is what a
    second round that keeps the answer earns); the i-th run's dice are seeded by `seeds[i]` when
    given, else by `seed` and i."""
    execution = execution or ExecutionConfig()
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> Trace:
        async with gate:
            row = rows[i]
            dice = seeds[i] if seeds is not None else seed * 100_003 + i
            options = RunOptions(config=execution).at_effort(row.effort).seeded(dice)
            return await rollout(texts[i], row.problem, row.offered(pool), options,
                                 messages=row_messages(row, pool, examples=examples))

    return list(await asyncio.gather(*(one(i) for i in range(len(rows)))))


def second_round_messages(problem: Problem, offered: Pool, prior: Sequence[PriorStep], *,
                          max_steps: int = DEFAULT_MAX_STEPS) -> list[Message]:
    return recursion_messages(problem.task_text, offered.specs, prior, max_steps=max_steps)


def plans_within(limit: int) -> list[Plan]:
    """The second-round plans a round of at most `limit` steps may write (keeping the answer is
    always one)."""
    return [p for p in RECURSION_PLANS if p.steps <= limit]


def draw_second_round(plan: Plan, kind: str, workers: Sequence[int], first: Trace, rng: random.Random) -> Workflow:
    """`plan`'s workflow: no steps for keep; a check by a worker other than the one that gave the
    first round's answer (when there is another); else drawn as a first round's plan is."""
    if not plan.steps:
        return Workflow(model_id=(), subtasks=(), access_list=())
    workflow = draw_workflow(plan, kind, workers, rng)
    if plan.name == "recheck" and first.steps:
        last = first.steps[-1].worker_id
        others = [w for w in workers if first.pool[w] != last]
        workflow = Workflow(model_id=(rng.choice(others or list(workers)),), subtasks=workflow.subtasks,
                            access_list=workflow.access_list)
    return workflow


def recursion_sft_examples(problems: Sequence[Problem], pool: Pool, sampling: PoolSampling, *, copies: int = 1,
                           seed: int = 0, examples: bool = False, max_steps: int = DEFAULT_MAX_STEPS) -> list[dict]:
    """Prompt/completion pairs for the warm start's second rounds: `copies` per problem, each a
    fresh first round (plan, workers, wording drawn as `sft_examples` draws them) run over the
    pool, shown in the recursion prompt, and a second round drawn uniformly from the
    `RECURSION_PLANS` that fit the first round's steps (`later_round_max_steps`)."""
    from conductor.training.sft_data import completion_text, draw_example, names_workers

    rng = random.Random(seed + 7919)
    plain = replace(sampling, recursion_fraction=0.0, efforts=())  # bad workers as the run offers them

    def names_of(row: PromptRow) -> list[str] | None:  # the workers by name where the run names them
        return list(row.pool_ids) if names_workers(sampling) else None

    rows: list[PromptRow] = []
    texts: list[str] = []
    for c in range(copies):
        for row in build_rows(problems, pool, plain, seed=seed * 1000 + 500 + c):
            plan, workflow = draw_example(row.problem, _workers(row, pool), rng)
            rows.append(row)
            texts.append(completion_text(row.problem, workflow, plan, names_of(row)))
    traces = asyncio.run(run_first_rounds(texts, rows, pool, examples=examples, seed=seed))
    out = []
    for row, trace in zip(rows, traces):
        plan = rng.choice(plans_within(later_round_max_steps(max_steps, len(trace.steps))))
        offered = row.offered(pool)
        second = draw_second_round(plan, row.problem.domain, _workers(row, pool), trace, rng)
        messages = second_round_messages(row.problem, offered, prior_steps(trace), max_steps=max_steps)
        out.append({
            "prompt": [m.model_dump() for m in messages],
            "completion": [{"role": "assistant", "content": completion_text(row.problem, second, plan, names_of(row))}],
        })
    return out


def prior_column(trace: Trace) -> str:
    """What a second-round row carries about its first round: the steps as the second round sees
    them, and the first round's reward (what keeping its answer earns)."""
    return json.dumps({"steps": [asdict(p) for p in prior_steps(trace)], "first_reward": reward_of(trace),
                       "first_calls": trace.calls})


def read_prior(value: str) -> tuple[list[PriorStep], float]:
    data = json.loads(value)
    steps = [PriorStep(**{**d, "reads": tuple(d["reads"]) if d.get("reads") is not None else None})
             for d in data["steps"]]
    return steps, float(data["first_reward"])


def sample_workflows(model: Any, tokenizer: Any, prompts: Sequence[list[dict]], *, max_new_tokens: int,
                     temperature: float = 1.0, seed: int = 0, batch_size: int = 16) -> list[str]:
    """Sampled completions (the policy's own distribution), batched; left padding."""
    import torch

    torch.manual_seed(seed)
    texts: list[str] = []
    was_training = model.training
    model.eval()
    tokenizer.padding_side = "left"
    try:
        for i in range(0, len(prompts), batch_size):
            chunk = [tokenizer.apply_chat_template(p, add_generation_prompt=True, tokenize=False)
                     for p in prompts[i: i + batch_size]]
            enc = tokenizer(chunk, return_tensors="pt", padding=True, add_special_tokens=False).to(model.device)
            with torch.no_grad():
                out = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=True, temperature=temperature,
                                     pad_token_id=tokenizer.pad_token_id)
            texts += tokenizer.batch_decode(out[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
    finally:
        model.train(was_training)
    return texts


def second_round_rows(rows: Sequence[PromptRow], pool: Pool, model: Any, tokenizer: Any, *, examples: bool,
                      max_new_tokens: int, seeds: Sequence[int], max_steps: int = DEFAULT_MAX_STEPS,
                      execution: ExecutionConfig | None = None) -> list[tuple[list[Message], str]]:
    """For each row, a first round written greedily by `model` (the first round a deployed Conductor
    writes, and the same on every process of a distributed run), run over the row's pool with dice
    seeded by `seeds`, and verified: the second round's prompt and its `prior` column."""
    from conductor.training.evaluate import generate_workflows

    prompts = [[m.model_dump() for m in row_messages(r, pool, examples=examples, max_steps=max_steps)] for r in rows]
    texts = generate_workflows(model, tokenizer, prompts, max_new_tokens=max_new_tokens)
    traces = asyncio.run(run_first_rounds(texts, rows, pool, examples=examples, seeds=seeds, execution=execution))
    return [(second_round_messages(r.problem, r.offered(pool), prior_steps(t), max_steps=max_steps), prior_column(t))
            for r, t in zip(rows, traces)]


class OnPolicySecondRounds:
    """The second-round rows of a GRPO dataset, written by the policy being trained: the dataset's
    transform (`datasets.Dataset.with_transform`, applied when the trainer's dataloader fetches a
    batch). A second-round row whose first round is not the current policy's (`version`: the
    optimizer steps taken, kept by `callbacks.SecondRoundRefresh`) gets a fresh one, written by
    `model` and run (`second_round_rows`); a group's repeats arrive in one fetch, so all the
    completions of a group follow the same first round. Other rows pass through unchanged, and so
    does every row before a model is attached (the trainer's own look at a row before training)."""

    def __init__(self, rows: Sequence[PromptRow], chosen: Sequence[int], pool: Pool, tokenizer: Any, *,
                 examples: bool, max_new_tokens: int, seed: int = 0, max_steps: int = DEFAULT_MAX_STEPS,
                 execution: ExecutionConfig | None = None) -> None:
        self.rows = {i: rows[i] for i in chosen}
        self.pool, self.tokenizer, self.examples = pool, tokenizer, examples
        self.max_new_tokens, self.seed, self.max_steps, self.execution = max_new_tokens, seed, max_steps, execution
        self.model: Any = None
        self.version = 0
        self.built: dict[int, tuple[int, list[dict], str]] = {}  # row -> (version, prompt, prior)

    def columns(self, n: int) -> dict[str, list]:
        """The columns the transform reads and fills, for a dataset of `n` rows: each row's index,
        and for a second-round row its first round (`prior`) and the version that wrote it (-1: none yet)."""
        return {"row": list(range(n)), "prior": [""] * n, "first_round_step": [-1] * n}

    def _build(self, stale: list[int]) -> None:
        # dice seeded by row and version: every process of a distributed run runs the same round
        seeds = [(self.seed * 1_000_003 + i) * 10_007 + self.version for i in stale]
        made = second_round_rows([self.rows[i] for i in stale], self.pool, self.model, self.tokenizer,
                                 examples=self.examples, max_new_tokens=self.max_new_tokens, seeds=seeds,
                                 max_steps=self.max_steps, execution=self.execution)
        for i, (messages, prior) in zip(stale, made):
            self.built[i] = (self.version, [m.model_dump(include={"role", "content"}) for m in messages], prior)

    def __call__(self, batch: dict[str, list]) -> dict[str, list]:
        if self.model is None:
            return batch
        stale = sorted({i for i in batch["row"] if i in self.rows and self.built.get(i, (None,))[0] != self.version})
        if stale:
            self._build(stale)
        out = {k: list(v) for k, v in batch.items()}
        for j, i in enumerate(batch["row"]):
            if i in self.rows:
                version, out["prompt"][j], out["prior"][j] = self.built[i]
                out["first_round_step"][j] = version
        return out


def second_round_action(workflow: Workflow | None) -> str:
    """What a second round did: stop (keep the answer), check (one step reading the first round),
    add attempts (fresh attempts and a step reading the first round), or replace (a workflow that
    does not read the first round); "unparsed" when it wrote no workflow."""
    if workflow is None:
        return "unparsed"
    if workflow.is_empty:
        return "stop"
    if not workflow.reads_prior:
        return "replace"
    fresh = sum(1 for s in workflow.steps if not s.reads and not s.reads_prior)
    return "add attempts" if fresh else "check"


SECOND_ROUND_ACTIONS = ("stop", "check", "add attempts", "replace", "unparsed")
"""What `second_round_action` names, in the order tables and metrics list them."""
SECOND_ROUND_PREFIX = "second_round/"
"""Training metrics of a batch's second-round rows, per first-round level (the row's effort; "any"
on a row that states none): `second_round/<level>/<action>` (add_attempts for "add attempts"),
the share of the level's rows whose completion took that action (every action logged, 0
included, so a mean over batches is a share), and `second_round/<level>/gain`, the mean of
(reward - the first round's) over the completions that acted (check, add attempts, replace):
what acting earned over keeping the answer, before `second_round_cost_weight`. No acting
completion: no gain logged (unknown, not 0)."""


def second_round_metrics(rows: Sequence[tuple[str, Workflow | None, float]]) -> dict[str, float]:
    """The `second_round/...` metrics of (level, the completion's workflow, its reward over the
    first round's) for each second-round completion of a batch."""
    by_level: dict[str, list[tuple[str, float]]] = {}
    for level, workflow, gain in rows:
        by_level.setdefault(level, []).append((second_round_action(workflow), gain))
    out: dict[str, float] = {}
    for level, done in by_level.items():
        for action in SECOND_ROUND_ACTIONS:
            share = sum(a == action for a, _ in done) / len(done)
            out[f"{SECOND_ROUND_PREFIX}{level}/{action.replace(' ', '_')}"] = share
        acted = [g for a, g in done if a not in ("stop", "unparsed")]
        if acted:
            out[f"{SECOND_ROUND_PREFIX}{level}/gain"] = sum(acted) / len(acted)
    return out
