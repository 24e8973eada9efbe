"""A coverage-guided (libFuzzer, through atheris) run of the workflow parser, for
tests/test_drill_fuzz.py. Any exception out of `parse` is a crash: atheris reports it and exits
non-zero. Usage: python tests/drill_atheris_parse.py -runs=N [-seed=S] CORPUS_DIR

The parser finds its lists with regular expressions, which libFuzzer cannot see into: from an
empty corpus it never writes `model_id = [`, and coverage stays flat. `write_seeds(DIR)` gives it
rendered workflows of every template shape to mutate."""

from __future__ import annotations

import gc
import sys
import types

import atheris

from conductor.planners import SHAPES, template_workflow
from conductor.workflow import ParseError, Workflow, parse, render

# After the import, not `instrument_imports()`: the editable install's import hook bypasses
# atheris's, which left the parser uninstrumented (cov 20). The project's own loaded functions
# only: `atheris.instrument_all()` also instrumented pydantic's and the standard library's, 37 s
# of a 53 s drill, for coverage of code that is not the parser's.
for func in [f for f in gc.get_objects() if isinstance(f, types.FunctionType)
             and (f.__module__ or "").startswith("conductor.")]:
    atheris.instrument_func(func)

POOL_IDS = ["sim-generalist", "sim-coder", "sim-mathematician"]


def one_input(data: bytes) -> None:
    text = atheris.FuzzedDataProvider(data).ConsumeUnicodeNoSurrogates(4096)
    result = parse(text, POOL_IDS)
    if not isinstance(result, (Workflow, ParseError)) or (isinstance(result, ParseError) and not result.detail):
        raise AssertionError(f"parse gave {result!r}")


def write_seeds(directory: str) -> None:
    from pathlib import Path

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    for shape in SHAPES:
        text = render(template_workflow(shape, [0, 1, 2]))
        (out / f"seed-{shape}").write_text(text)
        (out / f"seed-{shape}-fenced").write_text(f"Plan:\n```python\n{text}\n```\n")


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        if not arg.startswith("-"):
            write_seeds(arg)
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()
