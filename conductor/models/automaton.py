"""A finite automaton over token ids: which tokens may come next after a prefix. The tiny
Conductor's output grammar (`conductor.training.sft_data.decision_automaton`) is one; the decoder
that applies it is `conductor.models.constrained`. Plain Python, so building or checking one needs
no torch."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

Worker = int | str  # a worker as the grammar writes it: its number in the listing, or its id


def contains(ids: Sequence[int], window: Sequence[int]) -> bool:
    """Whether `window` stands in `ids`, contiguously."""
    ids, window = list(ids), list(window)
    n = len(window)
    return n > 0 and any(ids[i:i + n] == window for i in range(len(ids) - n + 1) if ids[i] == window[0])


@dataclass(frozen=True)
class DecisionAutomaton:
    """States are ints, `start` the first; `edges[state][token] = next state`. A state with no
    edges is final: past it (after the end-of-sequence token) nothing is constrained.

    A prompt may limit a workflow's steps (a later round runs at most as many steps as the round
    it reads: conductor.workflow.later_round_max_steps). `plan_steps` gives each plan token's step
    count and `limit_marks` the token ids by which a prompt states each limit, so that a plan
    over the prompt's limit is never sampled (`allowed`).

    A prompt may also offer fewer workers than the grammar knows (a randomized pool, an excluded
    worker). `worker_tokens` gives the worker each worker token names (its number, or its id in a
    grammar that names workers) and `worker_marks` the worker each listing token offers ("Model 2:
    ..." lines), so that no step goes to a worker the prompt does not offer. Why: such a workflow
    does not parse, and its reward of 0 taught GRPO to put every step on "Model 0" or "Model 1"
    (offered in every row), whatever worker sat there (issue 35).

    A later round's plans (keep the earlier answer, a check or attempts that read it through
    "prev") do not parse in a first round. `later_round_plans` are their plan tokens and
    `later_round_mark` the token ids by which a later round's prompt shows the earlier round, so
    that a first round never samples one (at temperature 1, 4 % of one model's first rounds did)."""

    start: int
    edges: dict[int, dict[int, int]]
    plan_steps: dict[int, int] = field(default_factory=dict)
    limit_marks: dict[int, tuple[int, ...]] = field(default_factory=dict)
    worker_tokens: dict[int, Worker] = field(default_factory=dict)
    worker_marks: dict[int, Worker] = field(default_factory=dict)
    later_round_plans: frozenset[int] = frozenset()
    later_round_mark: tuple[int, ...] = ()

    @classmethod
    def from_triples(cls, start: int, triples: Iterable[tuple[int, int, int]], *,
                     plan_steps: dict[int, int] | None = None,
                     limit_marks: dict[int, Sequence[int]] | None = None,
                     worker_tokens: dict[int, Worker] | None = None,
                     worker_marks: dict[int, Worker] | None = None,
                     later_round_plans: Iterable[int] = (), later_round_mark: Sequence[int] = ()) -> DecisionAutomaton:
        edges: dict[int, dict[int, int]] = {}
        for state, token, nxt in triples:
            out = edges.setdefault(state, {})
            if out.get(token, nxt) != nxt:
                raise ValueError(f"state {state}: token {token} leads to both {out[token]} and {nxt}")
            out[token] = nxt
        return cls(start, edges, dict(plan_steps or {}), {k: tuple(v) for k, v in (limit_marks or {}).items()},
                   dict(worker_tokens or {}), dict(worker_marks or {}), frozenset(later_round_plans),
                   tuple(later_round_mark))

    def to_config(self) -> dict[str, Any]:
        """JSON-able (config.json keys are strings, so the edges are [state, token, next] triples)."""
        return {"start": self.start,
                "edges": [[s, t, n] for s, out in sorted(self.edges.items()) for t, n in sorted(out.items())],
                "plan_steps": [[t, n] for t, n in sorted(self.plan_steps.items())],
                "limit_marks": [[n, list(ids)] for n, ids in sorted(self.limit_marks.items())],
                "worker_tokens": [[t, w] for t, w in sorted(self.worker_tokens.items())],
                "worker_marks": [[t, w] for t, w in sorted(self.worker_marks.items())],
                "later_round_plans": sorted(self.later_round_plans),
                "later_round_mark": list(self.later_round_mark)}

    @classmethod
    def from_config(cls, value: dict[str, Any]) -> DecisionAutomaton:
        # a model saved before step limits (offered workers, later rounds) were known lacks their
        # keys: it is not limited by them
        return cls.from_triples(int(value["start"]), (tuple(e) for e in value["edges"]),
                                plan_steps={int(t): int(n) for t, n in value.get("plan_steps", [])},
                                limit_marks={int(n): ids for n, ids in value.get("limit_marks", [])},
                                worker_tokens={int(t): w for t, w in value.get("worker_tokens", [])},
                                worker_marks={int(t): w for t, w in value.get("worker_marks", [])},
                                later_round_plans=[int(t) for t in value.get("later_round_plans", [])],
                                later_round_mark=[int(t) for t in value.get("later_round_mark", [])])

    def stated_limit(self, prompt_ids: Sequence[int]) -> int | None:
        """The step limit the prompt states (None: no limit mark in it)."""
        ids = list(prompt_ids)
        return next((n for n, mark in sorted(self.limit_marks.items()) if contains(ids, mark)), None)

    def offered_workers(self, prompt_ids: Sequence[int]) -> frozenset[Worker] | None:
        """The workers the prompt's listing offers (None: no worker listed by a mark, so none is
        masked)."""
        listed = frozenset(self.worker_marks[i] for i in set(prompt_ids) if i in self.worker_marks)
        return listed or None

    def later_round(self, prompt_ids: Sequence[int]) -> bool | None:
        """Whether the prompt is a later round's (None: this automaton has no mark to tell)."""
        return contains(prompt_ids, self.later_round_mark) if self.later_round_mark else None

    def allowed(self, state: int, limit: int | None = None, offered: frozenset[Worker] | None = None,
                later_round: bool | None = None) -> list[int]:
        """The tokens that may come next in `state`; under a step limit, no plan over it; with the
        `offered` workers, no step on another; in a first round (`later_round` False), no later
        round's plan."""
        out = self.edges.get(state, {})
        return sorted(t for t in out
                      if (limit is None or self.plan_steps.get(t, 0) <= limit)
                      and (offered is None or t not in self.worker_tokens or self.worker_tokens[t] in offered)
                      and (later_round is not False or t not in self.later_round_plans))

    def walk(self, tokens: Iterable[int]) -> int | None:
        """The state after `tokens` from the start; None when they leave the automaton."""
        state = self.start
        for token in tokens:
            out = self.edges.get(state)
            if not out:
                return state  # final: what follows (padding) is not the workflow's
            if token not in out:
                return None
            state = out[token]
        return state

    def accepts(self, tokens: Iterable[int]) -> bool:
        state = self.walk(tokens)
        return state is not None and not self.edges.get(state)
