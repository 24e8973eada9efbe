"""The SFT warm start, for real: a tiny model trained with TRL's SFTTrainer on generated
workflows (problems of the generated bank's train split) emits parseable workflows for most
held-out bank questions (greedy), and the SFT subtasks are on-topic for the simulated pool."""

from __future__ import annotations

import asyncio
import random

from conductor.models.tiny import load_tokenizer
from conductor.training.config import local_profile
from conductor.training.dataset import PoolSampling, build_rows, row_messages, training_pool
from conductor.training.evaluate import generate_workflows, score_texts
from conductor.training.problems import bank_splits, take_per_domain
from conductor.training.sft_data import sft_examples, task_workflow
from conductor.training.warm import warm_started_tiny
from conductor.workers.simulated.instructions import instruction_quality
from conductor.workflow import ParseError, parse

# Small enough for a minute or so on 2 cores: 48 problems x 4 copies, a 2-layer width-64 model.
SFT_SMALL = {"sft_epochs": 8.0, "sft_problems": 48, "sft_copies": 4}


def test_sft_warm_start_writes_parseable_workflows(tmp_path) -> None:
    from transformers import AutoModelForCausalLM

    splits = bank_splits()
    train, held_out = splits.train, take_per_domain(splits.test, 16)
    config = local_profile(tmp_path, **SFT_SMALL)
    model_dir = warm_started_tiny(config, train, hidden_size=64, num_hidden_layers=2)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    tokenizer = load_tokenizer(model_dir)
    pool = training_pool(config.pool_file, [*train, *held_out])
    rows = build_rows(held_out, pool, PoolSampling())
    prompts = [[m.model_dump() for m in row_messages(r, pool, examples=False)] for r in rows]
    texts = generate_workflows(model, tokenizer, prompts, max_new_tokens=config.max_completion_length)
    parsed = [parse(t, len(r.pool_ids)) for t, r in zip(texts, rows)]
    ok = [(p, r) for p, r in zip(parsed, rows) if not isinstance(p, ParseError)]
    assert len(ok) >= 0.7 * len(rows), texts
    # Its subtasks are the SFT wording (this small, briefly trained fixture model often writes one
    # domain's wording for every question; the local profile's model is measured in docs/training.md).
    assert all(p.subtasks[0].endswith(".") and len(p.subtasks[0]) > 40 for p, _ in ok), texts
    # And the parsed workflows run: every parsed one is scored 0.5 or 1 by the real path.
    result = asyncio.run(score_texts(texts, rows, pool, examples=False))
    assert result.format_rate == len(ok) / len(rows)


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
