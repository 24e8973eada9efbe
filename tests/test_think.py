"""One rule strips reasoning (`<think>` blocks) from what a model wrote, in any case, for the
answer extractors and the workflow parser alike."""

from __future__ import annotations

from conductor.answers import final_answer, strip_think
from conductor.workflow import parse

PLAN = "model_id = [0]\nsubtasks = ['Solve it.']\naccess_list = [[]]"


def test_blocks_and_a_cut_off_block_are_stripped_in_any_case() -> None:
    assert strip_think("<think>x</think>shown") == "shown"
    assert strip_think("<THINK>x</Think>shown") == "shown"
    assert strip_think("cut off reasoning</THINK>shown") == "shown"  # its opening tag was lost
    assert strip_think("no reasoning") == "no reasoning"


def test_the_answer_and_the_workflow_read_past_upper_case_reasoning() -> None:
    assert final_answer("thinking: the answer is 3</THINK>The answer is 4")[0] == "4"
    workflow = parse("model_id = [1]</THINK>\n" + PLAN, 3)
    assert workflow.model_id == (0,)
