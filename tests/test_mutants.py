"""tools/mutants.py on three cheap entries: a break the named test kills, one it misses, and one
whose original text is gone. The script reports each, exits non-zero, and leaves the checkout as
it was (it breaks a temporary copy)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def load_tool():  # noqa: ANN201 - tools/ is scripts, not a package
    spec = importlib.util.spec_from_file_location("mutants_tool", REPO / "tools" / "mutants.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up by name
    spec.loader.exec_module(module)
    return module


def test_the_script_reports_killed_survived_and_stale(capsys: pytest.CaptureFixture[str]) -> None:
    tool = load_tool()
    test = ("tests/test_promotion.py::test_mcnemar_p",)
    mutants = [
        tool.Mutant("killed-one", "registry/promotion.py", "for k in range(wins, n + 1)) / 2**n",
                    "for k in range(wins, n + 1)) / 2**(n - 1)", test),
        tool.Mutant("missed-one", "registry/promotion.py", "promoted = better and cheap", "promoted = True", test),
        tool.Mutant("stale-one", "registry/promotion.py", "text that is not in the file", "x", test),
    ]
    guarded = (REPO / "registry" / "promotion.py").read_text()
    code = tool.main(["--python", sys.executable], mutants=mutants)
    out = capsys.readouterr().out
    table = {line.split()[0]: line.split()[1] for line in out.splitlines() if line.endswith(test[0])}
    assert table == {"killed-one": "killed", "missed-one": "SURVIVED", "stale-one": "STALE"}, out
    assert code == 1 and "1 of 3 killed" in out
    assert (REPO / "registry" / "promotion.py").read_text() == guarded  # the checkout was never touched


def test_every_listed_mutant_applies_to_the_tree_once() -> None:
    """The list stays true to the code: each original text occurs exactly once in its file (an
    entry the code moved away from shows as STALE here before anyone runs the slow tests)."""
    tool = load_tool()
    stale = [m.name for m in tool.MUTANTS if (REPO / m.file).read_text().count(m.original) != 1]
    assert stale == []
    assert len({m.name for m in tool.MUTANTS}) == len(tool.MUTANTS)
