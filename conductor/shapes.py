"""Name a workflow's shape from its access lists, step count and recursion: the one list of
shape names (`TRACE_SHAPES`) and the one classifier, used by the warehouse's `traces.shape`."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from conductor.workflow import resolve_access

if TYPE_CHECKING:
    from conductor.trace import Trace

TRACE_SHAPES = (
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


# --- strategies over training (the paper's Figure 3) ---------------------------------------------

# The groups a "strategies over training" plot stacks, in stacking order: every shape keeps its
# name except the rare `empty` and `recursive`, which are counted as `other`.
STRATEGY_GROUPS = ("single", "verify_refine", "fan_out_aggregate", "chain", "parallel", "other", "unparsed")

SHARE_PREFIX = "shape_share/"
"""Training metrics `shape_share/<domain>/<shape>`: a step's share of rollouts of that domain
whose workflow has that shape (the reward logs them; MLflow and the plot read them)."""


def strategy_group(shape: str) -> str:
    """The plot's group of a shape name (`TRACE_SHAPES`)."""
    if shape not in TRACE_SHAPES:
        raise ValueError(f"unknown shape {shape!r}; shapes: {', '.join(TRACE_SHAPES)}")
    return shape if shape in STRATEGY_GROUPS else "other"


def share_metric(domain: str, shape: str) -> str:
    return f"{SHARE_PREFIX}{domain}/{shape}"


def parse_share_metric(name: str) -> tuple[str, str] | None:
    """(domain, shape) of a `shape_share/<domain>/<shape>` metric name; None for any other name."""
    if not name.startswith(SHARE_PREFIX):
        return None
    domain, _, shape = name[len(SHARE_PREFIX):].rpartition("/")
    return (domain, shape) if domain and shape in TRACE_SHAPES else None


def shape_shares(traces: Iterable[Trace]) -> dict[str, float]:
    """`shape_share/<domain>/<shape>` for each domain among `traces` and every shape in `TRACE_SHAPES`
    (0.0 for a shape no rollout of the domain took, so an average over batches stays a share).
    A domain with no rollout has no metrics: unknown is not 0."""
    counts: dict[str, Counter[str]] = {}
    for t in traces:
        counts.setdefault(t.domain, Counter())[shape_of(t)] += 1
    out: dict[str, float] = {}
    for domain, c in sorted(counts.items()):
        n = sum(c.values())
        out.update({share_metric(domain, s): c[s] / n for s in TRACE_SHAPES})
    return out
