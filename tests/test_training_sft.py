"""The SFT data: on-topic subtasks and a task-type reasoning line that depend on the task and
never on the workers, and workers drawn uniformly. (The SFT warm start itself, a real TRL
SFTTrainer run, is tested in test_training_grpo.py, whose GRPO tests start from its model.)"""

from __future__ import annotations

import collections
import math
import random

from conductor.training.config import local_profile
from conductor.training.dataset import PoolSampling, training_pool
from conductor.training.problems import bank_splits, take_per_domain
from conductor.training.sft_data import TASK_LINES, sft_examples, task_workflow
from conductor.workers.simulated.instructions import instruction_quality
from conductor.workflow import parse

def test_sft_subtasks_are_on_topic_and_hold_no_worker_information() -> None:
    train = take_per_domain(bank_splits().train, 200)
    # The simulated pool's instruction-quality function scores every SFT subtask ~1.
    rng = random.Random(0)
    for p in train:
        wf = task_workflow(p, [0, 1, 2], rng, p_check=0.5)
        assert all(instruction_quality(p, s) >= 0.95 for s in wf.subtasks), (p.question, wf.subtasks)
    # Different domains get different wording.
    by_domain = {p.domain: task_workflow(p, [0], random.Random(0), p_check=0.0).subtasks[0] for p in train}
    assert len(set(by_domain.values())) == 4
    # No worker information: the same problem and dice with other workers offered give the same
    # subtasks, and no subtask names a worker.
    for p in train[:40]:
        a, b = task_workflow(p, [0, 1, 2], random.Random(7)), task_workflow(p, [3, 4], random.Random(7))
        assert a.subtasks == b.subtasks
    pool = training_pool(local_profile("/tmp/unused").pool_file, train[:8])
    ids = [s.id for s in pool.specs]
    examples = sft_examples(train[:8], pool, PoolSampling(True, 2, None), copies=2, seed=1)
    assert not any(w in s or "Model " in s for ex in examples
                   for s in parse(ex["completion"][0]["content"], 99).subtasks for w in ids)


def test_sft_completions_state_the_task_type_and_pick_workers_uniformly() -> None:
    train = take_per_domain(bank_splits().train, 400)
    pool = training_pool(local_profile("/tmp/unused").pool_file, train)
    examples = sft_examples(train, pool, PoolSampling(), copies=2, seed=0)
    chosen: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for ex, problem in zip(examples, [p for _ in range(2) for p in train]):
        text = ex["completion"][0]["content"]
        # The reasoning line before the lists names the task type, and only that.
        line, lists = text.split("\n", 1)
        assert line == TASK_LINES[problem.domain]
        chosen[problem.domain][parse(lists, 4).model_id[0]] += 1
    assert len(set(TASK_LINES.values())) == 4
    # Over the full pool the first worker is uniform in every domain (no routing taught):
    # entropy near log2(4) = 2 bits, and every worker's share within 0.25 +- 0.08.
    for counts in chosen.values():
        n = sum(counts.values())
        assert len(counts) == 4 and all(abs(c / n - 0.25) < 0.08 for c in counts.values()), counts
        assert -sum(c / n * math.log2(c / n) for c in counts.values()) > 1.95


def test_tiny_tokenizer_gives_the_first_worker_a_token_per_kind_of_task(tmp_path) -> None:
    """The Conductor's first decision is two tokens: the words that say the kind of task (one
    token per kind, whatever the worker) and a token for (kind, first worker) that belongs to that
    kind only. With the worker a digit shared by every kind, GRPO learnt one worker for all kinds
    (docs/training.md, "Third round")."""
    from conductor.models.tiny import load_tokenizer
    from conductor.training.base_model import init_tiny_conductor

    train = take_per_domain(bank_splits().train, 200)
    pool = training_pool(local_profile(tmp_path).pool_file, train)
    tokenizer = load_tokenizer(init_tiny_conductor(tmp_path / "base", train, pool, seed=0))
    kinds, decisions = {}, {}
    for domain, line in TASK_LINES.items():
        for worker in range(len(pool.specs)):
            for more in ("", ", 0"):
                text = f"{line}\nmodel_id = [{worker}{more}]\n"
                ids = tokenizer(text, add_special_tokens=False)["input_ids"]
                assert tokenizer.decode(ids) == text
                kinds.setdefault(domain, set()).add(ids[0])
                decisions[(domain, worker, more)] = ids[1]
    # One token per kind of task, the same for every first worker, different across kinds.
    assert all(len(k) == 1 for k in kinds.values()) and len({min(k) for k in kinds.values()}) == 4
    # A token per (kind, first worker, one step or more): none shared.
    assert len(set(decisions.values())) == len(decisions) == 4 * len(pool.specs) * 2
