"""A learned router: question text -> the one worker most likely to answer it right.

In the spirit of RouterDC (a query -> model router trained on each model's outcomes), and a
deliberate simplification of it: RouterDC learns a dual-contrastive query embedding; this fits,
per worker, a logistic regression on TF-IDF word n-grams of the question predicting whether that
worker alone answers right, and routes to the worker with the highest predicted P(right).
Training data: every worker's single-step outcome on the train problems (run through the
executor, so on a simulated pool it costs nothing real)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from conductor.data.schema import Problem
from conductor.evaluation.baselines import (
    BaselineError, Lookup, domain_of, completion_of, index_of, prompt_for, question_of, single_workflow,
)
from conductor.types import Message, Task, WorkerSpec
from conductor.workers.base import Completion


class RouterPlanner:
    name = "router"

    def __init__(self, vectorizer: TfidfVectorizer, models: dict[str, LogisticRegression | bool],
                 lookup: Lookup | None = None) -> None:
        self.vectorizer, self.models, self.lookup = vectorizer, models, lookup

    @classmethod
    def fit(cls, questions: Sequence[str], outcomes: dict[str, Sequence[bool]], *, seed: int = 0,
            lookup: Lookup | None = None) -> RouterPlanner:
        """outcomes[worker][i]: did the worker alone answer questions[i] right."""
        if not questions:
            raise BaselineError("router: no training questions")
        vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=1, sublinear_tf=True)
        x = vectorizer.fit_transform(questions)
        models: dict[str, LogisticRegression | bool] = {}
        for worker, ys in outcomes.items():
            labels = [bool(y) for y in ys]
            if len(set(labels)) < 2:  # always right or always wrong: nothing to learn, a constant
                models[worker] = labels[0]
                continue
            models[worker] = LogisticRegression(max_iter=1000, random_state=seed).fit(x, labels)
        return cls(vectorizer, models, lookup)

    def scores(self, question: str) -> dict[str, float]:
        x = self.vectorizer.transform([question])
        return {w: float(m) if isinstance(m, bool) else float(m.predict_proba(x)[0, 1]) for w, m in self.models.items()}

    async def plan(self, messages: list[Message], offered: Sequence[WorkerSpec]) -> Completion:
        offered_ids = {s.id for s in offered if not s.is_conductor}
        scores = {w: p for w, p in self.scores(question_of(messages)).items() if w in offered_ids}
        if not scores:
            raise BaselineError("router: none of the workers it was trained on is offered")
        best = max(sorted(scores), key=lambda w: scores[w])
        return completion_of(single_workflow(index_of(offered, best), prompt_for(domain_of(self.lookup, messages))), self.name)


async def _outcomes(train: Sequence[Problem], pool_file: Path, workers: Sequence[str],
                    questions_in_flight: int | None = None) -> dict[str, list[bool]]:
    from conductor.config import ExecutionConfig
    from conductor.evaluation.baselines import WorkerPlanner
    from conductor.methods import Method
    from conductor.executor import RunOptions
    from conductor.solve import solve_many
    from conductor.workers.registry import BuildContext

    lookup = {p.task_text.strip(): (p.domain, p.source) for p in train}.get

    async def one(worker: str) -> list[bool]:
        execution = ExecutionConfig() if questions_in_flight is None else ExecutionConfig(
            questions_in_flight=questions_in_flight)
        method = Method(WorkerPlanner("single", worker, lookup), pool_file, execution)
        async with method.open_pool(BuildContext(problems=list(train))) as pool:
            traces = await solve_many([Task.of(p) for p in train], pool, method.planner,
                                      RunOptions(config=method.execution))
        return [bool(t.verdict and t.verdict.correct) for t in traces]

    # every worker at once (each has its own pool and slots): the training costs the slowest
    # worker's time, not the sum (7 workers x 240 questions at 3 s took minutes one by one)
    results = await asyncio.gather(*(one(w) for w in workers))
    return dict(zip(workers, results))


def train_router(train: Sequence[Problem], pool_file: str | Path, workers: Sequence[str], *, seed: int = 0,
                 lookup: Lookup | None = None, questions_in_flight: int | None = None) -> RouterPlanner:
    """Run every worker alone on the train problems and fit the router on the outcomes.
    `questions_in_flight`: training questions each worker is asked at once (each worker's own
    `concurrency:` still bounds its calls; None: the ExecutionConfig default)."""
    outcomes = asyncio.run(_outcomes(train, Path(pool_file), workers, questions_in_flight))
    return RouterPlanner.fit([p.task_text for p in train], outcomes, seed=seed, lookup=lookup)
