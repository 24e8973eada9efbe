"""The offline Conductor's starting point: a tiny Qwen2 whose tokenizer is trained on the
prompts and workflows it will read and write (`conductor model init --tiny DIR`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conductor.data.schema import Problem
from conductor.models.automaton import DecisionAutomaton
from conductor.models.tiny import build_tiny_causal_lm
from conductor.prompts import (EARLIER_WORKFLOW_HEADER, PriorStep, conductor_messages, recursion_messages,
                               worker_description)
from conductor.training.sft_data import (decision_automaton, decision_tokens, later_round_mark, step_limit_marks,
                                         tokenizer_corpus, worker_marks)
from conductor.types import WorkerSpec
from conductor.workers.pool import Pool
from conductor.workflow import DEFAULT_MAX_STEPS

# ~1.05M parameters (3,072 x 128 tied embeddings + 4 layers): about the size of the prototype
# (0.92M) that learned per-domain routing in 150-200 steps. 3,072 rather than 2,048 tokens: the
# fixed prompt texts take ~1,700 merges, and the rest make question words whole tokens.
TINY_SHAPE = {"vocab_size": 3072, "hidden_size": 128, "num_hidden_layers": 4, "num_attention_heads": 4}


def init_tiny_conductor(
    path: str | Path, problems: Sequence[Problem], pool: Pool, *, seed: int = 0, by_name: bool = False, **shape: int
) -> Path:
    """Build and save the untrained tiny model; its tokenizer covers `problems` and `pool`, and it
    samples through the decision grammar (every workflow it writes parses). `by_name`: its steps
    name their workers rather than number them (`sft_data.names_workers`)."""
    return build_tiny_causal_lm(
        path, seed=seed, corpus=tokenizer_corpus(problems, pool, seed=seed), tokens_across_words=True, fold_case=True,
        whole_tokens=decision_tokens(grammar_workers(pool.specs, by_name)), **{**TINY_SHAPE, **shape},
        automaton=lambda tok: conductor_automaton(tok, pool.specs, by_name=by_name),
    )


def grammar_workers(specs: Sequence[WorkerSpec], by_name: bool) -> int | list[str]:
    """What the grammar writes for a step's worker: a number below the pool's size, or an id."""
    return [s.id for s in specs] if by_name else len(specs)


def conductor_automaton(tokenizer: Any, specs: Sequence[WorkerSpec], *, by_name: bool = False) -> DecisionAutomaton:
    """The decision grammar over `tokenizer`'s ids for a pool of `specs`, with the marks by which
    its prompts state their step limit (a prompt over `specs`, as the Conductor reads it), list
    each offered worker (any of `specs` at any position, as randomized pools offer them) and show
    an earlier round (a later round's prompt)."""
    def ids(messages: Sequence[Any]) -> list[int]:
        return tokenizer.apply_chat_template([m.model_dump() for m in messages], add_generation_prompt=True,
                                             tokenize=True, return_dict=True)["input_ids"]

    def prompt_ids(limit: int) -> list[int]:
        return ids(conductor_messages("?", specs, examples=False, max_steps=limit))

    earlier = [PriorStep(index=0, worker=specs[0].id, subtask="?", response="?")]
    later = later_round_mark(tokenizer(f"\n{EARLIER_WORKFLOW_HEADER}\n", add_special_tokens=False)["input_ids"],
                             prompt_ids(DEFAULT_MAX_STEPS), ids(recursion_messages("?", specs, earlier)))

    listed = worker_marks(lambda line: tokenizer(line, add_special_tokens=False)["input_ids"],
                          [worker_description(spec) for spec in specs], [s.id for s in specs] if by_name else None)
    return decision_automaton(tokenizer.get_vocab(), grammar_workers(specs, by_name), tokenizer.eos_token_id,
                              limit_marks=step_limit_marks(prompt_ids), worker_marks=listed, later_round_mark=later)
