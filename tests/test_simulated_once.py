""""Is this pool simulated" has one definition and one banner (conductor/simulation.py): no other
module compares a provider with the simulated one, asks a pool file's `simulated` off a fresh
read, or words its own "simulated" banner. Each check reads the project's source, so a second
rule or a second wording anywhere in the packages fails here; the banner's own format and the
rule are checked on values."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conductor.simulation import SIMULATED_BANNER, any_simulated, simulated_note
from conductor.types import WorkerSpec
from conductor.workers.pool import PoolFile

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("conductor", "warehouse", "registry", "tasks", "flows", "server")
HOME = Path("conductor/simulation.py")
# A banner-like wording: the upper-case label, the banner's clauses, or "simulated pool" as a
# parenthesised or colon-led label. Prose ("the simulated pool's problem bank") is not one.
BANNER_LIKE = re.compile(r"(?-i:\bSIMULATED\b)|not a benchmark|not a bill|\(simulated|simulated pool[:)]"
                         r"|describe the simulation", re.IGNORECASE)


def _modules(root: Path):  # noqa: ANN202
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            yield path.relative_to(root), ast.parse(path.read_text(encoding="utf-8"))


def _docstrings(tree: ast.Module) -> set[int]:
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}


def banner_wordings(root: Path) -> list[str]:
    """`path:line text` of every string (docstrings aside) outside conductor/simulation.py that
    words a simulated banner of its own."""
    found = []
    for rel, tree in _modules(root):
        if rel == HOME:
            continue
        docs = _docstrings(tree)
        found += [f"{rel}:{node.lineno} {node.value!r}" for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
                  and BANNER_LIKE.search(node.value)]
    return found


def _names_simulated_provider(node: ast.expr) -> bool:
    return ((isinstance(node, ast.Constant) and node.value == "simulated")
            or (isinstance(node, ast.Name) and node.id == "SIMULATED_PROVIDER")
            or (isinstance(node, ast.Attribute) and node.attr == "SIMULATED_PROVIDER"))


def second_rules(root: Path) -> list[str]:
    """`path:line` of every other place that decides simulated-ness: a comparison with the
    simulated provider, or `read_pool_file(...).simulated` (a fresh read of the file, not the
    pool the run loaded)."""
    found = []
    for rel, tree in _modules(root):
        for node in ast.walk(tree):
            if (rel != HOME and isinstance(node, ast.Compare)
                    and any(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops)
                    and any(_names_simulated_provider(n) for n in [node.left, *node.comparators])):
                found.append(f"{rel}:{node.lineno} compares a provider with the simulated one")
            elif (isinstance(node, ast.Attribute) and node.attr == "simulated" and isinstance(node.value, ast.Call)
                  and isinstance(node.value.func, ast.Name) and node.value.func.id == "read_pool_file"):
                found.append(f"{rel}:{node.lineno} read_pool_file(...).simulated")
    return found


def test_no_second_banner_wording() -> None:
    assert banner_wordings(REPO) == []


def test_no_second_rule_for_simulated() -> None:
    assert second_rules(REPO) == []


def test_the_checks_find_a_second_rule_and_a_second_wording(tmp_path) -> None:
    """Both scans can fail: a module with its own rule and its own banner is found."""
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "bad.py").write_text(
        "from conductor.workers.pool import read_pool_file\n"
        "def label(spec, path):\n"
        "    sim = spec.provider == 'simulated' or read_pool_file(path).simulated\n"
        "    return ' (simulated pool: not real)' if sim else ''\n", encoding="utf-8")
    assert second_rules(tmp_path) == ["flows/bad.py:3 compares a provider with the simulated one",
                                      "flows/bad.py:3 read_pool_file(...).simulated"]
    assert banner_wordings(tmp_path) == ["flows/bad.py:4 ' (simulated pool: not real)'"]


def test_one_simulated_worker_makes_the_pool_simulated() -> None:
    real, sim = WorkerSpec(id="r", provider="openai_compatible"), WorkerSpec(id="s", provider="simulated")
    assert (any_simulated([real]), any_simulated([real, sim])) == (False, True)
    assert PoolFile(workers=[real, sim]).simulated and not PoolFile(workers=[real, sim]).offered(["r"]).simulated


def test_the_banner_has_one_format() -> None:
    assert simulated_note(True) == f" ({SIMULATED_BANNER})" and simulated_note(False) == ""
    assert SIMULATED_BANNER.startswith("SIMULATED")
