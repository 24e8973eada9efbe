"""Rich renderings of workflows and traces for the terminal."""

from __future__ import annotations

from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from conductor.trace import Trace
from conductor.workflow import render


def money(value: float | None) -> str:
    return "?" if value is None else f"${value:.4f}"


def trace_view(trace: Trace) -> Group:
    parts: list[object] = []
    if trace.workflow is not None:
        parts.append(Panel(Text(render(trace.workflow)), title="workflow", expand=False))
    table = Table(title="steps")
    for col in ("#", "worker", "reads", "status", "latency", "in tok", "out tok", "cost", "retries"):
        table.add_column(col, justify="right" if col not in ("worker", "status") else "left")
    for s in trace.steps:
        # a step a fallback answered (its worker was down) shows both, and the answering call's usage
        c = s.fallback_call if s.fallback_call is not None else s.call
        asked = s.worker_id if s.answered_by in (None, s.worker_id) else f"{s.worker_id} -> {s.answered_by} (fallback)"
        table.add_row(
            str(s.index), asked, ",".join(map(str, s.reads)) or "-", s.status,
            f"{s.finished_at_s - s.started_at_s:.2f}s",
            str(c.usage.input_tokens) if c else "-", str(c.usage.output_tokens) if c else "-",
            money(c.usage.cost_usd) if c else "-", str(c.usage.retries) if c else "-",
        )
    parts.append(table)
    if trace.stop_reason:
        parts.append(Text(f"stopped: {trace.stop_reason}", style="yellow"))
    u = trace.usage
    cost = money(u.cost_usd) if u.cost_usd is not None else "unknown (some prices unknown)"
    parts.append(f"[bold]totals[/]: {trace.calls} calls, {u.input_tokens}+{u.output_tokens} tokens, {cost},"
                 f" {trace.wall_s:.2f}s")
    parts.append(Panel(Text(trace.answer or "(no answer)"), title="answer", expand=False))
    return Group(*parts)
