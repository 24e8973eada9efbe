"""A finite automaton over token ids: which tokens may come next after a prefix. The tiny
Conductor's output grammar (`conductor.training.sft_data.decision_automaton`) is one; the decoder
that applies it is `conductor.models.constrained`. Plain Python, so building or checking one needs
no torch."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DecisionAutomaton:
    """States are ints, `start` the first; `edges[state][token] = next state`. A state with no
    edges is final: past it (after the end-of-sequence token) nothing is constrained."""

    start: int
    edges: dict[int, dict[int, int]]

    @classmethod
    def from_triples(cls, start: int, triples: Iterable[tuple[int, int, int]]) -> DecisionAutomaton:
        edges: dict[int, dict[int, int]] = {}
        for state, token, nxt in triples:
            out = edges.setdefault(state, {})
            if out.get(token, nxt) != nxt:
                raise ValueError(f"state {state}: token {token} leads to both {out[token]} and {nxt}")
            out[token] = nxt
        return cls(start, edges)

    def to_config(self) -> dict[str, Any]:
        """JSON-able (config.json keys are strings, so the edges are [state, token, next] triples)."""
        return {"start": self.start,
                "edges": [[s, t, n] for s, out in sorted(self.edges.items()) for t, n in sorted(out.items())]}

    @classmethod
    def from_config(cls, value: dict[str, Any]) -> DecisionAutomaton:
        return cls.from_triples(int(value["start"]), (tuple(e) for e in value["edges"]))

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
