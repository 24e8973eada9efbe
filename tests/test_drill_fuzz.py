"""Fuzz drill: the Conductor-output parser, pool files and dataset rows under generated input.
Nothing crashes; every failure is the module's own clear error (ParseError, PoolError,
RowError) with a message. The CI form runs a few thousand inputs; `CONDUCTOR_FUZZ_EXAMPLES=100000`
gives the full drill (figures in docs/serve.md)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conductor.data.loaders import sample_path, to_problems
from conductor.data.schema import Problem
from conductor.data.sources import SOURCES, RowError
from conductor.workers.pool import Pool, PoolError
from conductor.workflow import ParseError, Workflow, parse

EXAMPLES = int(os.environ.get("CONDUCTOR_FUZZ_EXAMPLES", "2000"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
POOL_IDS = ["sim-generalist", "sim-coder", "sim-mathematician"]

# Pieces of what a Conductor writes, and of what goes wrong in it, glued at random.
_pieces = st.sampled_from([
    "model_id", "subtasks", "access_list", " = ", "=", "[", "]", "(", ")", ",", "'", '"', '"""', "\n", " ",
    "0", "1", "2", "3", "-1", "99", "1e9", "'all'", "[]", "[0]", "[0, 1]", "None", "True", "```python", "```",
    "#", "\\", "{", "}", "lambda: 0", "__import__('os')", "'sim-coder'", "Solve it.", "\x00", "é", "🙂", "..."])
_conductorish = st.lists(st.one_of(_pieces, st.text(max_size=12)), max_size=60).map("".join)


@given(st.one_of(_conductorish, st.text(max_size=2000)))
@FUZZ
def test_parse_never_crashes(text):
    result = parse(text, POOL_IDS)
    assert isinstance(result, (Workflow, ParseError))
    if isinstance(result, ParseError):
        assert result.detail and str(result)
    else:
        assert 1 <= len(result) <= 5 and all(0 <= w < len(POOL_IDS) for w in result.model_id)


_scalar = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=True),
                    st.text(max_size=20))
_value = st.recursive(_scalar, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                      max_leaves=12)
_worker = st.fixed_dictionaries(
    {"id": st.one_of(st.sampled_from(["a", "b", "a b", ""]), _scalar)},
    optional={"provider": st.one_of(st.sampled_from(["simulated", "openai_compatible", "conductor", "nope"]), _value),
              "model": _value, "prices": st.one_of(st.fixed_dictionaries({"input": _scalar, "output": _scalar}), _value),
              "concurrency": _scalar, "timeout_s": _scalar, "temperature": _scalar,
              "options": st.one_of(st.fixed_dictionaries({"base_url": _scalar}), _value)})
_pool_doc = st.one_of(_value, st.fixed_dictionaries(
    {"workers": st.one_of(st.lists(_worker, max_size=4), _value)}, optional={"name": _value}))


@given(st.one_of(_pool_doc.map(lambda d: yaml.safe_dump(d, allow_unicode=True)), st.text(max_size=300)))
@FUZZ
def test_pool_files_load_or_fail_with_a_pool_error(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("pool", numbered=True) / "pool.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        Pool.load(path)
    except PoolError as exc:
        assert str(exc)


_SAMPLED = {name: [json.loads(line) for line in sample_path(name).read_text().splitlines()[:3]]
            for name in SOURCES if sample_path(name).is_file()}


@st.composite
def _mutated_row(draw):
    name = draw(st.sampled_from(sorted(_SAMPLED)))
    row = dict(draw(st.sampled_from(_SAMPLED[name])))
    for _ in range(draw(st.integers(1, 4))):
        key = draw(st.sampled_from(sorted(row) or ["x"]))
        if draw(st.booleans()):
            row.pop(key, None)
        else:
            row[key] = draw(_value)
    return name, row


@given(_mutated_row())
@FUZZ
def test_dataset_rows_become_problems_or_row_errors(named_row):
    name, row = named_row
    [result] = list(to_problems(SOURCES[name], [row], on_error="skip"))
    assert isinstance(result, (Problem, RowError))
    if isinstance(result, RowError):
        assert name in str(result) and result.why


def test_the_fuzzed_sources_are_many():
    assert len(_SAMPLED) >= 5, sorted(_SAMPLED)


def test_atheris_coverage_guided_run_of_parse_finds_no_crash(tmp_path):
    """libFuzzer-driven (atheris) inputs; CI runs 20,000, CONDUCTOR_FUZZ_EXAMPLES sets more."""
    import subprocess
    import sys

    runs = max(20_000, EXAMPLES)
    script = Path(__file__).with_name("drill_atheris_parse.py")
    # -rss_limit_mb: when every loaded function was instrumented the interpreter sat at ~2.2 GB
    # rss, over libFuzzer's default 2,048 MB limit on some runs (fresh-clone CI: "out-of-memory
    # (used: 2290Mb)" with no input at fault); with the project's functions only it is ~60 MB. The
    # drill looks for crashes in parse, not for the interpreter's size, so the limit stays high.
    r = subprocess.run([sys.executable, str(script), f"-runs={runs}", "-seed=1", "-rss_limit_mb=6144",
                        f"-artifact_prefix={tmp_path}/",
                        str(tmp_path / "corpus")],
                       capture_output=True, text=True, timeout=1200, cwd=Path(__file__).parent.parent)
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"Done {runs} runs" in r.stderr, r.stderr[-1000:]
    inited, done = (int(line.split("cov: ")[1].split()[0]) for line in r.stderr.splitlines()
                    if "INITED" in line or "DONE" in line)
    assert done > 100, r.stderr[-1000:]  # the parser's code is instrumented and reached, not just its entry
