"""The Planner protocol and the planners: what writes a workflow for a question.

A planner gets the Conductor prompt and the offered pool as data (the specs in the order the
prompt numbers them), and returns its text as a Completion. Three kinds:
- `ScriptedPlanner`: fixed texts, for tests and replays;
- `TemplatePlanner`: one of the common workflow shapes (the stand-in Conductor until a trained
  one is registered);
- `ModelPlanner`: any Worker acting as the Conductor, e.g. a trained model directory (the local
  transformers adapter) or an OpenAI-compatible server serving one. Its call goes through the
  one retry loop, with the worker's timeout.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal, Protocol, get_args, runtime_checkable

from conductor.effort import Effort, stated_effort
from conductor.types import Message, Prices, Usage, WorkerSpec
from conductor.workers.base import Completion, Worker
from conductor.workers.calling import CallPolicy, call_worker
from conductor.workflow import ALL, Access, Workflow, render

Shape = Literal["single", "chain", "verify", "fanout"]
SHAPES: tuple[Shape, ...] = get_args(Shape)  # the one list of template shapes (CLI choices, checks)
DEFAULT_SHAPE: Shape = "fanout"  # three attempts and an aggregator: the stand-in Conductor's default
# The shape the stand-in writes at each effort level its prompt states (conductor/effort.py): one
# call, a solve and a check (2), three attempts and an aggregator (4), so that calls rise with the
# level. A prompt that states no level gets the planner's own shape.
EFFORT_SHAPES: dict[Effort, Shape] = {Effort.LOW: "single", Effort.MEDIUM: "verify", Effort.HIGH: "fanout"}


@runtime_checkable
class Planner(Protocol):
    """The Conductor as the executor sees it: a prompt and the offered pool in, a workflow text out."""

    name: str  # what a Method calls it, e.g. template-fanout

    async def plan(self, messages: list[Message], offered: Sequence[WorkerSpec]) -> Completion: ...


def _free(text: str, model: str) -> Completion:
    # Runs in-process: it costs nothing (an unknown cost would mark every total uncertain).
    return Completion(text=text, usage=Usage(cost_usd=0.0), model=model)


class ScriptedPlanner:
    """Returns the given outputs in order (the last one repeats); records what it was asked."""

    name = "scripted"

    def __init__(self, outputs: Iterable[str]) -> None:
        self._outputs = deque(outputs)
        if not self._outputs:
            raise ValueError("ScriptedPlanner needs at least one output")
        self.prompts: list[list[Message]] = []

    async def plan(self, messages: list[Message], offered: Sequence[WorkerSpec]) -> Completion:
        self.prompts.append(messages)
        text = self._outputs.popleft() if len(self._outputs) > 1 else self._outputs[0]
        return _free(text, self.name)


def template_workflow(shape: Shape, workers: list[int]) -> Workflow:
    """A workflow of the given shape over worker indices (the first is the strongest)."""
    if not workers:
        raise ValueError("no workers to plan over")
    a = workers[0]
    b = workers[1] if len(workers) > 1 else a
    solve = "Solve the task. Show your reasoning briefly and end with the final answer in the requested format."
    if shape == "single":
        return Workflow(model_id=(a,), subtasks=(solve,), access_list=((),))
    if shape == "chain":
        return Workflow(
            model_id=(b, a),
            subtasks=(
                "Outline a plan for solving the task and work out the key intermediate results.",
                "Using the work above, solve the task and give the final answer in the requested format.",
            ),
            access_list=((), ALL),
        )
    if shape == "verify":
        return Workflow(
            model_id=(b, a),
            subtasks=(solve, "Verify the answer above step by step; fix it if it is wrong and give the final answer."),
            access_list=((), ALL),
        )
    attempts = (workers * 3)[:3] if len(workers) < 3 else workers[:3]
    access: list[Access] = [(), (), (), ALL]
    return Workflow(
        model_id=(*attempts, a),
        subtasks=(
            solve,
            "Solve the task independently, checking each step; end with the final answer.",
            solve,
            "Compare the three answers above, check them, and choose the correct one; give the final answer.",
        ),
        access_list=tuple(access),
    )


def worker_indices(offered: Sequence[WorkerSpec]) -> list[int]:
    """Indices of the offered workers a plan may call (the Conductor itself excluded)."""
    return [i for i, spec in enumerate(offered) if not spec.is_conductor]


class TemplatePlanner:
    """Writes one workflow shape over the offered workers (skipping the Conductor itself); a
    prompt that states an effort level gets that level's shape instead (`EFFORT_SHAPES`)."""

    def __init__(self, shape: Shape = DEFAULT_SHAPE) -> None:
        if shape not in SHAPES:
            raise ValueError(f"unknown shape {shape!r}; one of {', '.join(SHAPES)}")
        self.shape = shape
        self.name = f"template-{shape}"
        self._texts: dict[tuple[Shape, tuple[int, ...]], str] = {}

    def shape_for(self, messages: list[Message]) -> Shape:
        """The effort level the prompt's user message states picks the shape; none: our own."""
        effort = stated_effort(messages)
        return self.shape if effort is None else EFFORT_SHAPES[effort]

    async def plan(self, messages: list[Message], offered: Sequence[WorkerSpec]) -> Completion:
        key = (self.shape_for(messages), tuple(worker_indices(offered)))
        text = self._texts.get(key)
        if text is None:  # the text depends only on the shape and which positions may be called: render once
            text = self._texts[key] = "Plan:\n" + render(template_workflow(key[0], list(key[1])))
        return _free(text, self.name)


class ModelPlanner:
    """A Worker acting as the Conductor. Its text is parsed like any Conductor's: garbage
    becomes a parse-failure trace, and a failed call a `planner_error` trace."""

    def __init__(self, worker: Worker, *, policy: CallPolicy | None = None,
                 few_shot_examples: bool | None = None, default_effort: str | None = None) -> None:
        self.worker = worker
        self.policy = policy or CallPolicy()
        self.name = f"model:{worker.spec.id}"
        # the prompt format the model was trained on (None: whatever the caller asks for)
        self.few_shot_examples = few_shot_examples
        # the effort level stated when the caller states none (a model trained with effort rows)
        self.default_effort = default_effort

    @classmethod
    def from_directory(cls, path: str | Path, *, max_tokens: int = 512, timeout_s: float = 120.0,
                       temperature: float | None = 0.0, prices: Prices | None = None,
                       device: str = "cpu") -> ModelPlanner:
        """A transformers model directory (config.json, tokenizer, weights) run on this machine
        (`device`: a torch device, e.g. "cuda"). It has no per-token bill, so it costs 0 unless
        `prices` say otherwise."""
        from conductor.models.prompt_format import read_prompt_format
        from conductor.workers.local import LocalOptions, LocalWorker

        fmt = read_prompt_format(path)
        spec = WorkerSpec(id=f"conductor-{Path(path).name}", provider="local", model=str(path),
                          max_tokens=max_tokens, timeout_s=timeout_s, temperature=temperature, concurrency=1,
                          prices=prices or Prices(input=0.0, output=0.0))
        return cls(LocalWorker(spec, LocalOptions(device=device)), few_shot_examples=fmt.few_shot_examples if fmt else None,
                   default_effort=fmt.default_effort if fmt else None)

    @classmethod
    def from_server(cls, base_url: str, model: str, *, api_key_env: str | None = None, max_tokens: int = 1024,
                    timeout_s: float = 120.0, prices: Prices | None = None) -> ModelPlanner:
        """A Conductor served by an OpenAI-compatible server (vLLM, Ollama, `conductor serve`)."""
        from conductor.workers.registry import BuildContext, factory_for

        options = {"base_url": base_url} | ({"api_key_env": api_key_env} if api_key_env else {})
        spec = WorkerSpec(id=f"conductor-{model.replace(' ', '-')}", provider="openai_compatible", model=model,
                          max_tokens=max_tokens, timeout_s=timeout_s, prices=prices, options=options)
        return cls(factory_for("openai_compatible")(spec, BuildContext()))

    async def plan(self, messages: list[Message], offered: Sequence[WorkerSpec]) -> Completion:
        return await call_worker(self.worker, messages, self.policy, max_tokens=self.worker.spec.max_tokens,
                                 temperature=self.worker.spec.temperature)

    async def aclose(self) -> None:
        await self.worker.aclose()
