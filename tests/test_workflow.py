"""The workflow format: every ParseError reason, real-world variants, round trips."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conductor.workflow import (
    ALL,
    ParseError,
    ParseErrorReason,
    Workflow,
    parse,
    render,
    resolve_access,
    validate,
)

R = ParseErrorReason


def lists(ids: str, subtasks: str, access: str) -> str:
    return f"model_id = {ids}\nsubtasks = {subtasks}\naccess_list = {access}"


def test_paper_format_parses():
    text = lists("[0, 2]", '["Solve it.", "Check it."]', '[[], "all"]')
    wf = parse(text, 3)
    assert wf == Workflow(model_id=(0, 2), subtasks=("Solve it.", "Check it."), access_list=((), ALL))
    assert [s.reads for s in wf.steps] == [(), (0,)]


def test_variants_fences_think_smart_quotes_colons_and_text_around():
    text = (
        "<think>I could use model_id = [4] but no.</think>\n"
        "Here is my plan.\n```python\n"
        "**model_ids**: [0, 'Model 1']\n"
        "Sub_tasks = [\u201cFirst draft\u201d, \u201cPolish it\u201d]\n"
        "access: ['all', [0]]\n```\nHope this helps!"
    )
    wf = parse(text, 3)
    assert isinstance(wf, Workflow), wf
    assert wf.model_id == (0, 1)
    assert wf.subtasks == ("First draft", "Polish it")
    assert wf.access_list == (ALL, (0,))


def test_json_fallback_and_worker_names():
    text = 'model_id: ["gpt", "claude"]\nsubtasks: ["a", "b"]\naccess_list: [[], [0]]\n'
    assert parse(text, ["gpt", "claude"]).model_id == (0, 1)
    # JSON-only literals (true/null) are read by the JSON fallback when Python's literal fails:
    # the list is found, and the error is about its content, not its syntax.
    assert parse(lists("[0]", '["x"]', "[null]"), 1).reason is R.INVALID_ACCESS
    assert parse(lists("[0]", "[true]", "[[]]"), 1).reason is R.INVALID_SUBTASK


def test_last_occurrence_wins_over_a_draft():
    text = lists("[0]", '["draft"]', "[[]]") + "\nOn reflection:\n" + lists("[1, 0]", '["a", "b"]', '[[], "all"]')
    assert parse(text, 2).model_id == (1, 0)


def test_label_like_text_inside_a_subtask_is_not_a_label():
    wf = Workflow(model_id=(0, 1), subtasks=("write model_id = [7] in prose", "access_list = [[5]]"), access_list=((), ALL))
    assert parse(render(wf), 2) == wf


def test_all_on_step_zero_reads_nothing():
    wf = parse(lists("[0]", '["x"]', '["all"]'), 1)
    assert wf.steps[0].reads == ()
    assert resolve_access(ALL, 3) == (0, 1, 2)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("x" * 70_000, R.OVERSIZE),
        ("I think we should ask Model 0.", R.MISSING_LIST),
        ('model_id = [0]\nsubtasks = ["a"]', R.MISSING_LIST),
        ('model_id = 0\nsubtasks = ["a"]\naccess_list = [[]]', R.NOT_A_LIST),
        ('model_id = [0\nsubtasks = ["a"]\naccess_list = [[]]', R.NOT_A_LIST),
        ('model_id = [0, foo()]\nsubtasks = ["a"]\naccess_list = [[]]', R.NOT_A_LIST),
        (lists("[0, 1]", '["a"]', "[[], []]"), R.UNEQUAL_LENGTHS),
        (lists("[]", "[]", "[]"), R.NO_STEPS),
        (lists("[0]*6".replace("[0]*6", str([0] * 6)), str(["a"] * 6), str([[]] * 6)), R.TOO_MANY_STEPS),
        (lists("[3]", '["a"]', "[[]]"), R.UNKNOWN_WORKER),
        (lists('["nobody"]', '["a"]', "[[]]"), R.UNKNOWN_WORKER),
        (lists("[-1]", '["a"]', "[[]]"), R.UNKNOWN_WORKER),
        (lists("[True]", '["a"]', "[[]]"), R.UNKNOWN_WORKER),
        (lists("[0]", "[42]", "[[]]"), R.INVALID_SUBTASK),
        (lists("[0]", '["  "]', "[[]]"), R.INVALID_SUBTASK),
        (lists("[0]", '["a"]', '["some"]'), R.INVALID_ACCESS),
        (lists("[0]", '["a"]', '[["0"]]'), R.INVALID_ACCESS),
        (lists("[0, 1]", '["a", "b"]', "[[1], []]"), R.FORWARD_REFERENCE),
        (lists("[0, 1]", '["a", "b"]', "[[], [-1]]"), R.FORWARD_REFERENCE),
        (lists("[0, 1]", '["a", "b"]', "[[], [1]]"), R.SELF_REFERENCE),
    ],
)
def test_every_parse_error_reason(text, reason):
    result = parse(text, 3)
    assert isinstance(result, ParseError), result
    assert result.reason is reason, result
    assert result.detail


def test_every_reason_is_covered_by_a_test():
    import inspect

    source = inspect.getsource(inspect.getmodule(test_every_parse_error_reason))
    assert all(f"R.{r.name}" in source for r in R)


def test_limits_are_configurable():
    text = lists(str([0] * 6), str(["a"] * 6), str([[]] * 6))
    assert isinstance(parse(text, 1, max_steps=6), Workflow)
    assert parse("model_id=[0]", 1, max_chars=5).reason is R.OVERSIZE


def test_empty_workflow_allowed_for_recursion():
    wf = parse(lists("[]", "[]", "[]"), 2, allow_empty=True)
    assert isinstance(wf, Workflow) and wf.is_empty


def test_deeply_nested_input_is_an_error_not_a_crash():
    text = "model_id = " + "[" * 5000 + "]" * 5000 + '\nsubtasks=["a"]\naccess_list=[[]]'
    assert parse(text, 1).reason is R.NOT_A_LIST


def test_validate_checks_code_built_workflows():
    ok = Workflow(model_id=(0,), subtasks=("a",), access_list=((),))
    assert validate(ok, 1) is None
    bad = Workflow(model_id=(0, 0), subtasks=("a", "b"), access_list=((1,), ()))
    assert validate(bad, 1).reason is R.FORWARD_REFERENCE
    with pytest.raises(ValueError):
        Workflow(model_id=(0,), subtasks=(), access_list=())


def test_depth_of_shapes():
    chain = Workflow(model_id=(0, 0, 0), subtasks=("a", "b", "c"), access_list=((), (0,), (1,)))
    fan = Workflow(model_id=(0, 0, 0, 0), subtasks=("a", "b", "c", "d"), access_list=((), (), (), ALL))
    assert chain.depth() == 3 and fan.depth() == 2


# --- property tests ---------------------------------------------------------------------

@st.composite
def workflows(draw, pool_size: int = 4):
    n = draw(st.integers(1, 5))
    ids = tuple(draw(st.integers(0, pool_size - 1)) for _ in range(n))
    subtasks = tuple(draw(st.text(min_size=1, max_size=60).filter(lambda s: s.strip())) for _ in range(n))
    access = []
    for i in range(n):
        if draw(st.booleans()):
            access.append(ALL)
        else:
            access.append(tuple(sorted(draw(st.sets(st.integers(0, i - 1), max_size=i))) if i else ()))
    return Workflow(model_id=ids, subtasks=subtasks, access_list=tuple(access))


@given(workflows())
@settings(max_examples=300, deadline=None)
def test_render_parse_round_trip(wf):
    assert parse(render(wf), 4) == wf


@given(st.text(max_size=3000))
@settings(max_examples=300, deadline=None)
def test_arbitrary_text_never_raises(text):
    result = parse(text, 3)
    assert isinstance(result, (Workflow, ParseError))


_fragments = st.sampled_from(
    ["model_id", "subtasks", "access_list", "=", ":", "[", "]", "[0]", '"all"', "'", '"', ",", "\n",
     "<think>", "</think>", "```", "\u201c", "\\", "[[", "]]", "0", "1", "-1", " "]
)


@given(st.lists(_fragments, max_size=80).map("".join))
@settings(max_examples=500, deadline=None)
def test_format_shaped_noise_never_raises(text):
    result = parse(text, 2)
    assert isinstance(result, (Workflow, ParseError))
    if isinstance(result, Workflow):
        assert 1 <= len(result) <= 5 and all(0 <= w < 2 for w in result.model_id)


def test_an_internal_bug_raises_instead_of_passing_for_bad_input(monkeypatch):
    """parse handles what a text can cause, not every exception: a bug must not read as not_a_list."""
    import conductor.workflow as workflow_module

    def broken(value, index, earlier_round):
        raise KeyError("bug")

    monkeypatch.setattr(workflow_module, "_access", broken)
    with pytest.raises(KeyError, match="bug"):
        parse("model_id = [0]\nsubtasks = ['x']\naccess_list = [[]]", 1)


def test_prev_reads_the_earlier_round_in_a_recursion_round():
    text = lists("[0, 1, 1]", '["More.", "Again.", "Compare all."]', '[[], "prev", ["prev", 0, 1]]')
    wf = parse(text, 2, earlier_round=True)
    assert isinstance(wf, Workflow), wf
    assert wf.access_list == ((), ("prev",), ("prev", 0, 1))
    assert [(s.reads, s.reads_prior) for s in wf.steps] == [((), False), ((), True), ((0, 1), True)]
    assert wf.reads_prior and wf.depth() == 2
    assert parse(render(wf), 2, earlier_round=True) == wf
    assert validate(wf, 2, earlier_round=True) is None
    assert parse(lists("[0]", '["x"]', '[["PREV "]]'), 1, earlier_round=True).access_list == (("prev",),)


@pytest.mark.parametrize(
    ("access", "earlier_round", "reason", "detail"),
    [
        ('[[], ["prev"]]', False, R.INVALID_ACCESS, "first round"),
        ('[[], "prev"]', False, R.INVALID_ACCESS, "first round"),
        ('[[], ["previous"]]', True, R.INVALID_ACCESS, "got"),
        ('[[], ["prev", "x"]]', True, R.INVALID_ACCESS, "got"),
        ('[[], ["prev", 1]]', True, R.SELF_REFERENCE, "reads itself"),
        ('[[], ["prev", 3]]', True, R.FORWARD_REFERENCE, "not an earlier step"),
        ('[[], ["prev", -1]]', True, R.FORWARD_REFERENCE, "not an earlier step"),
    ],
)
def test_malformed_prev_is_a_parse_error(access, earlier_round, reason, detail):
    got = parse(lists("[0, 0]", '["x", "y"]', access), 1, earlier_round=earlier_round)
    assert isinstance(got, ParseError) and got.reason is reason and detail in got.detail, got


def test_a_code_built_first_round_may_not_read_prev():
    reads_prev = Workflow(model_id=(0,), subtasks=("x",), access_list=(("prev",),))
    assert validate(reads_prev, 1).reason is R.INVALID_ACCESS
    assert validate(reads_prev, 1, earlier_round=True) is None
