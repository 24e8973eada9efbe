"""The SFT warm start, for real: a tiny model trained with TRL's SFTTrainer on generated
workflows emits parseable workflows for most held-out questions (greedy)."""

from __future__ import annotations

import asyncio

from conductor.models.tiny import load_tokenizer
from conductor.training.config import local_profile
from conductor.training.dataset import PoolSampling, build_rows, training_pool
from conductor.training.evaluate import generate_workflows, score_texts
from conductor.training.dataset import row_messages
from conductor.training.problems import local_problems, split_problems
from conductor.training.sft_data import SOLVE, subject_of
from conductor.training.warm import warm_started_tiny
from conductor.workflow import ParseError, parse


def test_sft_warm_start_writes_parseable_workflows(tmp_path) -> None:
    from transformers import AutoModelForCausalLM

    problems = local_problems("train")
    train, held_out = split_problems(problems, 0.25, seed=0)
    config = local_profile(tmp_path, sft_epochs=8.0)
    # A smaller model than the default keeps the test to a minute or two on 2 cores.
    model_dir = warm_started_tiny(config, train, copies=6, hidden_size=64, num_hidden_layers=2)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    tokenizer = load_tokenizer(model_dir)
    pool = training_pool(config.pool_file, problems)
    rows = build_rows(held_out, pool, PoolSampling())
    prompts = [[m.model_dump() for m in row_messages(r, pool, examples=False)] for r in rows]
    texts = generate_workflows(model, tokenizer, prompts, max_new_tokens=96)
    parsed = [parse(t, len(r.pool_ids)) for t, r in zip(texts, rows)]
    ok = [p for p in parsed if not isinstance(p, ParseError)]
    assert len(ok) >= 0.7 * len(rows), texts
    # The subtasks speak of the task, not of a fixed "Solve the task.".
    assert all(p.subtasks[0] for p in ok)
    # And the parsed workflows run: every parsed one is scored 0.5 or 1 by the real path.
    result = asyncio.run(score_texts(texts, rows, pool, examples=False))
    assert result.format_rate == len(ok) / len(rows)


def test_subtask_wording_depends_on_the_task_not_the_worker() -> None:
    problems = local_problems("train")
    by_domain = {p.domain: p for p in problems}
    texts = {d: SOLVE[d][0].format(subject=subject_of(p)) for d, p in by_domain.items()}
    assert len(set(texts.values())) == len(texts)
    assert "boxed" in texts["math"] and "letter" in texts["choice"] and "python" in texts["code"].lower()
    assert not any("Model" in t or "sim-" in t for t in texts.values())
