"""Constrained decoding for the tiny Conductor: its output is a sequence of whole decision tokens
(`conductor.training.sft_data.decision_tokens`) whose syntax is fixed, so a finite automaton over
token ids says, after each token, which tokens may come next. Sampling through it, every
completion parses whatever its shape: the lists' syntax is fixed, only the choices are free
(the plan, the kind of task, each step's worker and wording).

Why: under the 0 / 0.5 / 1 reward an unparsed workflow costs 0.5-1 while a strategy gains ~0.05,
so a long shape that breaks 4 % of the time at temperature 1 is abandoned whatever it is worth
(issue 23). With the automaton the format no longer depends on the shape.

The automaton travels in the model's config (`ConductorQwen2Config.decision_automaton`, saved in
config.json), and `ConductorQwen2ForCausalLM.generate` applies it to every generation: TRL's
GRPO rollouts, the held-out evaluation, serving. Importing this module registers the model type
with transformers' Auto classes, so `AutoModelForCausalLM.from_pretrained` loads it. A model
without an automaton (any other checkpoint) generates as transformers does.

The training loss stays TRL's (log-probabilities of the unconstrained softmax): the masked
tokens are ones the warm start already gives almost no mass, so the samples are near on-policy.
"""

from __future__ import annotations

from dataclasses import field
from pathlib import Path
from typing import Any

import torch
from huggingface_hub.dataclasses import strict
from transformers import AutoConfig, AutoModelForCausalLM, LogitsProcessor, LogitsProcessorList, Qwen2Config
from transformers import PreTrainedModel, Qwen2ForCausalLM

from conductor.models.automaton import DecisionAutomaton, Worker

MODEL_TYPE = "conductor_qwen2"


class AutomatonLogits(LogitsProcessor):
    """Masks every token the automaton does not allow next, any plan over the step limit the
    row's prompt states, any worker its prompt does not offer, and in a first round any later
    round's plan. The completion starts at
    `prompt_length` (generation's inputs are left-padded to one length); a row in a final state,
    or off the automaton, is left as it is."""

    def __init__(self, automaton: DecisionAutomaton, prompt_length: int) -> None:
        self.automaton, self.prompt_length = automaton, prompt_length
        self._allowed: dict[tuple, torch.Tensor] = {}
        # each row's (step limit, workers offered, later round or not), read from its prompt once
        self._limits: list[tuple[int | None, frozenset[Worker] | None, bool | None]] | None = None

    def _allowed_ids(self, state: int,
                     limits: tuple[int | None, frozenset[Worker] | None, bool | None]) -> torch.Tensor:
        if (state, *limits) not in self._allowed:
            self._allowed[state, *limits] = torch.tensor(self.automaton.allowed(state, *limits), dtype=torch.long)
        return self._allowed[state, *limits]

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self._limits is None:
            self._limits = [(self.automaton.stated_limit(row), self.automaton.offered_workers(row),
                             self.automaton.later_round(row))
                            for row in input_ids[:, :self.prompt_length].tolist()]
        mask = torch.zeros_like(scores, dtype=torch.bool)
        for row, ids in enumerate(input_ids[:, self.prompt_length:].tolist()):
            state = self.automaton.walk(ids)
            if state is None or not self.automaton.edges.get(state):
                continue
            mask[row] = True
            mask[row, self._allowed_ids(state, self._limits[row]).to(scores.device)] = False
        return scores.masked_fill(mask, float("-inf"))


@strict
class ConductorQwen2Config(Qwen2Config):
    """Qwen2's config plus the Conductor's decision automaton (None: unconstrained)."""

    model_type = MODEL_TYPE
    decision_automaton: dict | None = None
    # TRL builds a KL reference model (GRPOConfig.beta > 0) from the config's architecture name,
    # and for one outside `transformers` reads `auto_map`: empty sends it to AutoModelForCausalLM,
    # where this module registers the class (empty is also "no remote code" to transformers).
    auto_map: dict = field(default_factory=dict)


class ConductorQwen2ForCausalLM(Qwen2ForCausalLM):
    """Qwen2 whose `generate` samples through the config's decision automaton."""

    config_class = ConductorQwen2Config

    def generate(self, inputs: torch.Tensor | None = None, generation_config: Any = None,
                 logits_processor: LogitsProcessorList | None = None, **kwargs: Any) -> Any:
        automaton = getattr(self.config, "decision_automaton", None)
        if automaton:
            ids = inputs if inputs is not None else kwargs["input_ids"]
            processors = LogitsProcessorList(logits_processor or [])
            processors.append(AutomatonLogits(DecisionAutomaton.from_config(automaton), ids.shape[1]))
            logits_processor = processors
        return super().generate(inputs, generation_config=generation_config, logits_processor=logits_processor,
                                **kwargs)


AutoConfig.register(MODEL_TYPE, ConductorQwen2Config, exist_ok=True)
AutoModelForCausalLM.register(ConductorQwen2Config, ConductorQwen2ForCausalLM, exist_ok=True)


def load_causal_lm(path: str | Path, **kwargs: Any) -> PreTrainedModel:
    """`AutoModelForCausalLM.from_pretrained`, with the Conductor's model type registered (this
    module's import): the one way the project loads a causal LM directory."""
    return AutoModelForCausalLM.from_pretrained(str(path), **kwargs)
