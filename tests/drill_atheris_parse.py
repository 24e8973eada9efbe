"""A coverage-guided (libFuzzer, through atheris) run of the workflow parser, for
tests/test_drill_fuzz.py. Any exception out of `parse` is a crash: atheris reports it and exits
non-zero. Usage: python tests/drill_atheris_parse.py -runs=N [-seed=S]"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    from conductor.workflow import ParseError, Workflow, parse

POOL_IDS = ["sim-generalist", "sim-coder", "sim-mathematician"]


def one_input(data: bytes) -> None:
    text = atheris.FuzzedDataProvider(data).ConsumeUnicodeNoSurrogates(4096)
    result = parse(text, POOL_IDS)
    if not isinstance(result, (Workflow, ParseError)) or (isinstance(result, ParseError) and not result.detail):
        raise AssertionError(f"parse gave {result!r}")


if __name__ == "__main__":
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()
