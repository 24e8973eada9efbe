"""Workflow shapes, from the access lists, the subtasks and recursion."""

from __future__ import annotations

import pytest

from conductor.trace import StepRecord, Trace
from conductor.workflow import parse
from conductor.shapes import shape_of
from conductor.shapes import TRACE_SHAPES, classify


@pytest.mark.parametrize(
    ("reads", "subtasks", "kwargs", "shape"),
    [
        ([], [], {"parsed": False}, "unparsed"),
        ([], [], {}, "empty"),
        ([[]], ["Solve."], {}, "single"),
        ([[], [0]], ["Solve.", "Solve again."], {"recursed": True}, "recursive"),
        ([[], [], [0, 1]], ["A", "B", "Combine the answers."], {}, "fan_out_aggregate"),
        ([[], [], []], ["A", "B", "C"], {}, "parallel"),
        ([[], [0]], ["Solve.", "Verify the answer above."], {}, "verify_refine"),
        ([[], [0], [0, 1]], ["Solve.", "Explain.", "Refine the solution."], {}, "verify_refine"),
        ([[], [0], [1]], ["Solve.", "Explain.", "Summarise."], {}, "chain"),
        ([[], [0], [], [2]], ["A", "B", "C", "D"], {}, "parallel"),  # two independent chains
    ],
)
def test_classify(reads, subtasks, kwargs, shape):
    assert classify(reads, subtasks, **kwargs) == shape
    assert shape in TRACE_SHAPES


def test_other_is_the_fallback_for_reads_no_workflow_makes():
    # Step 0 always reads nothing, so with one independent step every later step reads
    # something: only malformed read lists (step 0 reading itself) reach "other".
    assert classify([[0], []], ["A", "B"]) == "other"


def test_shape_of_a_trace_uses_its_workflow():
    wf = parse('model_id = [0, 1, 2]\nsubtasks = ["a", "b", "c"]\naccess_list = [[], [], "all"]', 3)
    assert not isinstance(wf, type(None))
    t = Trace(problem_id="p", source="s", domain="math", workflow=wf, steps=[StepRecord(index=i, worker_id="w", subtask="s") for i in range(3)])
    assert shape_of(t) == "fan_out_aggregate"
    t.steps[1].child = Trace(problem_id="p", source="s", domain="math", depth=1)
    assert shape_of(t) == "recursive"
    assert shape_of(Trace(problem_id="p", source="s", domain="math", parse_status="missing_list")) == "unparsed"
