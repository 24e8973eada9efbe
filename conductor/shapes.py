"""Name a workflow's shape from its access lists, step count and recursion: the one list of
shape names (`SHAPES`) and the one classifier, used by the warehouse's `traces.shape`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from conductor.workflow import resolve_access

if TYPE_CHECKING:
    from conductor.trace import Trace

SHAPES = (
    "unparsed", "empty", "recursive", "single", "fan_out_aggregate", "parallel",
    "verify_refine", "chain", "other",
)

# A later step that reads earlier work and is told to check or improve it.
_VERIFY = re.compile(r"\b(verif|check|review|critiqu|refin|revis|correct|double-check|audit|validat)", re.I)


def classify(
    reads: Sequence[Sequence[int]],
    subtasks: Sequence[str] = (),
    *,
    parsed: bool = True,
    recursed: bool = False,
) -> str:
    """The shape of one round.

    `reads[i]` are the earlier steps step i sees (resolved access). Precedence, first match wins:
    unparsed, empty (0 steps), recursive (a step re-planned), single (1 step),
    fan_out_aggregate (>= 2 independent steps and a step reading >= 2 steps), parallel (>= 2
    independent steps, nothing reading several), verify_refine (a later step reading earlier work
    whose subtask says check/verify/refine), chain (every later step reads an earlier one), other.
    """
    if not parsed:
        return "unparsed"
    n = len(reads)
    if n == 0:
        return "empty"
    if recursed:
        return "recursive"
    if n == 1:
        return "single"
    independent = sum(1 for r in reads if not r)
    if independent >= 2:
        return "fan_out_aggregate" if any(len(r) >= 2 for r in reads) else "parallel"
    texts = list(subtasks) + [""] * (n - len(subtasks))
    if any(reads[i] and _VERIFY.search(texts[i]) for i in range(1, n)):
        return "verify_refine"
    if all(reads[i] for i in range(1, n)):
        return "chain"
    return "other"


def shape_of(trace: Trace) -> str:
    """The shape of one round, from its workflow (or its steps when none parsed)."""
    recursed = any(s.child is not None for s in trace.steps)
    wf = trace.workflow
    if wf is not None:  # resolve access directly: Workflow.steps builds a model per step (slow)
        reads = [resolve_access(a, i) for i, a in enumerate(wf.access_list)]
        return classify(reads, wf.subtasks, recursed=recursed)
    if trace.parse_status != "ok":
        return "unparsed"
    return classify([s.reads for s in trace.steps], [s.subtask for s in trace.steps], recursed=recursed)
